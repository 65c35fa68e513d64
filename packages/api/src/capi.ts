import type { Condition } from './condition.js';
import type { KubeObject, ResourceType } from './object-meta.js';

export const CAPI_IPAM_GROUP = 'ipam.cluster.x-k8s.io';

/** The IPAM contract versions we speak; the controller uses the first one the server serves. */
export const CAPI_IPAM_VERSIONS = ['v1beta2', 'v1beta1'] as const;
export type CapiIpamVersion = (typeof CAPI_IPAM_VERSIONS)[number];

export function ipAddressClaimType(version: CapiIpamVersion): ResourceType {
  return { group: CAPI_IPAM_GROUP, version, kind: 'IPAddressClaim', plural: 'ipaddressclaims', namespaced: true };
}

export function ipAddressType(version: CapiIpamVersion): ResourceType {
  return { group: CAPI_IPAM_GROUP, version, kind: 'IPAddress', plural: 'ipaddresses', namespaced: true };
}

export const CAPI_CORE_GROUP = 'cluster.x-k8s.io';
export const CAPI_CORE_VERSIONS = ['v1beta2', 'v1beta1'] as const;
export type CapiCoreVersion = (typeof CAPI_CORE_VERSIONS)[number];

export function clusterType(version: CapiCoreVersion): ResourceType {
  return { group: CAPI_CORE_GROUP, version, kind: 'Cluster', plural: 'clusters', namespaced: true };
}

export const CapiLabels = { clusterName: 'cluster.x-k8s.io/cluster-name', controlPlane: 'cluster.x-k8s.io/control-plane' } as const;
export const CapiAnnotations = { paused: 'cluster.x-k8s.io/paused' } as const;

/**
 * Reasons of the claim's Ready condition, as CAPI names them (plus AddressAllocated for True, and
 * PoolStatusFull: an address is free but the pool object has no room left under its size budget).
 */
export const ClaimReasons = {
  addressAllocated: 'AddressAllocated',
  poolNotReady: 'PoolNotReady',
  poolExhausted: 'PoolExhausted',
  poolStatusFull: 'PoolStatusFull',
  allocationFailed: 'AllocationFailed',
} as const;
export type ClaimReason = (typeof ClaimReasons)[keyof typeof ClaimReasons];

export interface PoolReference {
  apiGroup?: string;
  kind: string;
  name: string;
}

/** CAPI v1beta1 conditions add a severity to False ones. */
export interface V1Beta1Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  severity?: 'Error' | 'Warning' | 'Info' | '';
  reason?: string;
  message?: string;
  lastTransitionTime: string;
}

/** IPAddressClaim in either served version; fields absent from v1beta1/v1.7 are optional. */
export interface IPAddressClaim extends KubeObject {
  spec: { poolRef: PoolReference; clusterName?: string };
  status?: {
    addressRef?: { name?: string };
    conditions?: (Condition | V1Beta1Condition)[];
  };
}

export interface IPAddress extends KubeObject {
  spec: {
    address: string;
    prefix: number;
    gateway?: string;
    claimRef: { name: string };
    poolRef: PoolReference;
  };
}

export interface Cluster extends KubeObject {
  spec?: {
    paused?: boolean;
    infrastructureRef?: ContractReference;
    controlPlaneRef?: ContractReference;
    controlPlaneEndpoint?: { host?: string; port?: number };
  };
  /** v1beta1 reports infrastructureReady; v1beta2 initialization.infrastructureProvisioned. */
  status?: { infrastructureReady?: boolean; initialization?: { infrastructureProvisioned?: boolean } };
}

export function machineType(version: CapiCoreVersion): ResourceType {
  return { group: CAPI_CORE_GROUP, version, kind: 'Machine', plural: 'machines', namespaced: true };
}

export function machineHealthCheckType(version: CapiCoreVersion): ResourceType {
  return { group: CAPI_CORE_GROUP, version, kind: 'MachineHealthCheck', plural: 'machinehealthchecks', namespaced: true };
}

/** CAPI annotations the network controller reads on cloned infrastructure machines. */
export const CapiClonedAnnotations = {
  fromName: 'cluster.x-k8s.io/cloned-from-name',
  fromGroupKind: 'cluster.x-k8s.io/cloned-from-groupkind',
} as const;

/** The object references Cluster API uses (v1beta1 spells them with apiVersion; v1beta2 with apiGroup). */
export interface ContractReference {
  apiVersion?: string;
  apiGroup?: string;
  kind: string;
  name: string;
  namespace?: string;
}

/** A Cluster API Machine in either served version; only the fields the network controller reads. */
export interface Machine extends KubeObject {
  spec: {
    clusterName: string;
    bootstrap: { configRef?: ContractReference; dataSecretName?: string };
    infrastructureRef: ContractReference;
    providerID?: string;
    version?: string;
  };
  status?: { phase?: string; nodeRef?: { name: string } };
}

/** MachineHealthCheck, for the hold-time warning. v1beta1: nodeStartupTimeout "10m"; v1beta2: seconds. */
export interface MachineHealthCheck extends KubeObject {
  spec: {
    clusterName: string;
    selector: { matchLabels?: Record<string, string>; matchExpressions?: { key: string; operator: string; values?: string[] }[] };
    nodeStartupTimeout?: string;
    remediation?: { triggerIf?: unknown };
    checks?: { nodeStartupTimeoutSeconds?: number };
  };
}

/** The bootstrap data Secret (CABPK or user supplied): `value`, and `format` when CABPK wrote it. */
export const BOOTSTRAP_SECRET_TYPE = 'cluster.x-k8s.io/secret';
