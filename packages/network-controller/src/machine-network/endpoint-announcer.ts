import {
  CapiLabels,
  ClusterEndpointAnnotations,
  ClusterEndpointConditionTypes,
  ClusterEndpointReasons,
  MachineNetworkReasons,
} from '@metal-l2/api';
import { getCondition } from '@metal-l2/kube';
import { renderEndpointAnnouncer, type PortConfig, type RenderedAnnouncer } from '@metal-l2/machine-config';
import { describe, type MachineNetworkScope } from './scope.js';

/** What the injection step does when the announcer is not there yet: a reason and a message for UserDataInjected. */
export interface AnnouncerWait {
  readonly reason: string;
  readonly message: string;
}

/**
 * The VIP announcer a machine's user data carries: only a control-plane Machine (CAPI's
 * control-plane label) of a Cluster linked to a ClusterEndpointTemplate gets one. Such a machine
 * waits (fail closed: a control plane booted without it never holds the VIP) until the Cluster's
 * ClusterEndpoint has an address, and is refused with a reason when its ports do not carry the
 * endpoint's VLAN. Workers, machines of Clusters without an endpoint template and of Clusters
 * running with an endpoint of their own (EndpointAlreadySet) get nothing.
 */
export function announcerFor(
  scope: MachineNetworkScope,
  ports: readonly PortConfig[],
): { readonly next: RenderedAnnouncer | undefined } | { readonly wait: AnnouncerWait } {
  const { ctx, machine, clusterName } = scope;
  if (machine?.metadata.labels?.[CapiLabels.controlPlane] === undefined || clusterName === undefined) return { next: undefined };
  const cluster = ctx.caches.clusters?.get({ namespace: scope.namespace, name: clusterName });
  const template = cluster?.metadata.annotations?.[ClusterEndpointAnnotations.template];
  if (template === undefined || template === '') return { next: undefined };
  const endpoint = ctx.caches.clusterEndpoints?.get({ namespace: scope.namespace, name: clusterName });
  const status = endpoint?.status;
  // The Cluster runs with another endpoint (set by hand): there is no VIP of ours to announce.
  if (getCondition(status?.conditions, ClusterEndpointConditionTypes.endpointSet)?.reason === ClusterEndpointReasons.endpointAlreadySet)
    return { next: undefined };
  if (endpoint === undefined || status?.address === undefined || status.prefix === undefined) {
    return {
      wait: {
        reason: MachineNetworkReasons.waitingForEndpoint,
        message: `control-plane machine of Cluster ${describe(scope, clusterName)}: waiting for ClusterEndpoint ${describe(scope, clusterName)} to have an address (its VIP announcer needs it)`,
      },
    };
  }
  const rendered = renderEndpointAnnouncer({
    address: status.address,
    prefix: status.prefix,
    port: endpoint.spec.port ?? status.port ?? 6443,
    vxlan: endpoint.spec.vxlan,
    virtualRouterID: endpoint.spec.virtualRouterID ?? status.virtualRouterID ?? 1,
    ports,
  });
  if (rendered.kind === 'rendered') return { next: rendered.announcer };
  const vlanMissing = rendered.issues.some((i) => i.code === 'EndpointVlanNotOnMachine');
  return {
    wait: {
      reason: vlanMissing ? MachineNetworkReasons.endpointVlanNotOnMachine : MachineNetworkReasons.invalidEndpoint,
      message: `the VIP announcer of ClusterEndpoint ${describe(scope, clusterName)} (${status.address}, VLAN ${endpoint.spec.vxlan}) cannot be rendered: ${rendered.issues.map((i) => i.message).join('; ')}`,
    },
  };
}
