import type { KubeObject, ResourceType } from '../src/index.js';

/** CAPI's IPAddressClaim (v1.14 CRDs: v1alpha1, v1beta1, v1beta2 served; v1beta2 stored). */
export const claimType: ResourceType = {
  group: 'ipam.cluster.x-k8s.io',
  version: 'v1beta2',
  kind: 'IPAddressClaim',
  plural: 'ipaddressclaims',
  namespaced: true,
};

export interface IPAddressClaim extends KubeObject {
  spec: { poolRef: { apiGroup: string; kind: string; name: string }; clusterName?: string };
  status?: {
    addressRef?: { name: string };
    conditions?: {
      type: string;
      status: string;
      reason: string;
      message: string;
      lastTransitionTime: string;
      observedGeneration?: number;
    }[];
  };
}

export function newClaim(namespace: string, name: string, pool = 'pool-a'): IPAddressClaim {
  return {
    apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
    kind: 'IPAddressClaim',
    metadata: { namespace, name },
    spec: { poolRef: { apiGroup: 'ipam.metal.x-k8s.io', kind: 'InClusterIPPool', name: pool } },
  };
}

export interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

export function newConfigMap(namespace: string, name: string, data: Record<string, string> = {}): ConfigMap {
  return { metadata: { namespace, name }, data };
}
