import {
  CapiLabels,
  ClusterEndpointAnnotations,
  ClusterEndpointConditionTypes,
  ClusterEndpointReasons,
  DEFAULT_ENDPOINT_PORT,
  MachineNetworkReasons,
  type AnnouncedEndpoint,
} from '@metal-l2/api';
import { getCondition } from '@metal-l2/kube';
import { renderEndpointAnnouncer, type AnnouncerIssue, type PortConfig, type RenderedAnnouncer } from '@metal-l2/machine-config';
import { describe, type MachineNetworkScope } from './scope.js';

/** What the injection step does when the announcer is not there yet: a reason and a message for UserDataInjected. */
export interface AnnouncerWait {
  readonly reason: string;
  readonly message: string;
}

/** A control plane's announcer and the endpoint it announces (what injection records). */
export interface Announcement {
  readonly endpoint: AnnouncedEndpoint;
  readonly announcer: RenderedAnnouncer;
}

/**
 * The VIP announcer a machine's user data carries: only a control-plane Machine (CAPI's
 * control-plane label) of a Cluster whose endpoint is a VIP of ours gets one. Ours means either the
 * Cluster's spec.controlPlaneEndpoint.host is its ClusterEndpoint's address (whatever happened to
 * the endpoint-template annotation or the port since: the Cluster runs on the VIP, so every new
 * control plane must be able to hold it, or it goes with the last original), or the Cluster links a
 * ClusterEndpointTemplate and its endpoint is not someone else's (EndpointAlreadySet). In the second
 * case a machine waits (fail closed: a control plane booted without it never holds the VIP) until
 * the ClusterEndpoint has an address. A machine whose ports do not carry the endpoint's VLAN is
 * refused with a reason. Workers and control planes of Clusters running on an endpoint that is not
 * ours get nothing.
 */
export function announcerFor(
  scope: MachineNetworkScope,
  ports: readonly PortConfig[],
): { readonly next: Announcement | undefined } | { readonly wait: AnnouncerWait } {
  const { ctx, machine, clusterName } = scope;
  if (machine?.metadata.labels?.[CapiLabels.controlPlane] === undefined || clusterName === undefined) return { next: undefined };
  const cluster = ctx.caches.clusters?.get({ namespace: scope.namespace, name: clusterName });
  const endpoint = ctx.caches.clusterEndpoints?.get({ namespace: scope.namespace, name: clusterName });
  const status = endpoint?.status;
  const runsOnVip =
    status?.address !== undefined && status.prefix !== undefined && cluster?.spec?.controlPlaneEndpoint?.host === status.address;
  if (!runsOnVip) {
    const template = cluster?.metadata.annotations?.[ClusterEndpointAnnotations.template];
    if (template === undefined || template === '') return { next: undefined };
    // The Cluster runs with another endpoint (set by hand): there is no VIP of ours to announce.
    if (getCondition(status?.conditions, ClusterEndpointConditionTypes.endpointSet)?.reason === ClusterEndpointReasons.endpointAlreadySet)
      return { next: undefined };
  }
  if (endpoint === undefined || status?.address === undefined || status.prefix === undefined) {
    return {
      wait: {
        reason: MachineNetworkReasons.waitingForEndpoint,
        message: `control-plane machine of Cluster ${describe(scope, clusterName)}: waiting for ClusterEndpoint ${describe(scope, clusterName)} to have an address (its VIP announcer needs it)`,
      },
    };
  }
  const announced: AnnouncedEndpoint = {
    address: status.address,
    prefix: status.prefix,
    port: endpoint.spec.port ?? status.port ?? DEFAULT_ENDPOINT_PORT,
    vxlan: endpoint.spec.vxlan,
    virtualRouterID: endpoint.spec.virtualRouterID ?? status.virtualRouterID ?? 1,
  };
  const rendered = renderAnnouncement(announced, ports);
  if ('next' in rendered) return rendered;
  const vlanMissing = rendered.issues.some((i) => i.code === 'EndpointVlanNotOnMachine');
  return {
    wait: {
      reason: vlanMissing ? MachineNetworkReasons.endpointVlanNotOnMachine : MachineNetworkReasons.invalidEndpoint,
      message: `the VIP announcer of ClusterEndpoint ${describe(scope, clusterName)} (${status.address}, VLAN ${endpoint.spec.vxlan}) cannot be rendered: ${rendered.issues.map((i) => i.message).join('; ')}`,
    },
  };
}

/** The announcer of an endpoint on these ports: the one announcerFor gives, or the one a machine recorded it was given. */
export function renderAnnouncement(
  endpoint: AnnouncedEndpoint,
  ports: readonly PortConfig[],
): { readonly next: Announcement } | { readonly issues: readonly AnnouncerIssue[] } {
  const rendered = renderEndpointAnnouncer({ ...endpoint, ports });
  return rendered.kind === 'rendered' ? { next: { endpoint, announcer: rendered.announcer } } : { issues: rendered.issues };
}
