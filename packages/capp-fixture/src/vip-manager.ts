// The control-plane VIP pieces of CAPP v0.9.0's PacketMachine reconcile (pkg/cloud/packet/
// client.go GetIPByClusterIdentifier, EnsureNodeBGPEnabled; packetmachine_controller.go): which
// reservation CAPP takes for the cluster's endpoint, and how it reads Metal's answers. Pure.
import type { AnyIPReservation, IPReservation, MetalClient } from '@metal-l2/metal-api';
import { findBgpConfigByProject, requestLocalBgpConfig } from './capp-metal-calls.js';

/** The tag CAPP's PacketCluster controller puts on the cluster's endpoint reservation (generateElasticIPIdentifier). */
export function elasticIpIdentifier(clusterName: string): string {
  return `cluster-api-provider-packet:cluster-id:${clusterName}`;
}

/**
 * GetIPByClusterIdentifier as CAPP uses it (the "not found" error is discarded by every caller):
 * the first reservation of the list tagged for the cluster; failing that, whatever the loop's
 * variable last held, i.e. the LAST entry's public reservation (undefined when that entry is a
 * VRF reservation, or the list is empty). CAPP then reads `.Assignments` of the result, so an
 * undefined result is a nil-pointer panic in CAPP.
 */
export function clusterReservation(list: readonly AnyIPReservation[], clusterName: string): IPReservation | undefined {
  const wanted = elasticIpIdentifier(clusterName);
  let last: IPReservation | undefined;
  for (const r of list) {
    last = r.type === 'vrf' ? undefined : r;
    if (last?.tags?.includes(wanted) === true) return last;
  }
  return last;
}

/** The error that stands for CAPP's panic on a nil reservation (controller-runtime retries a recovered panic). */
export function nilReservationPanic(clusterName: string): Error {
  return new Error(
    `panic: runtime error: invalid memory address or nil pointer dereference [recovered]: no IP reservation tagged ${elasticIpIdentifier(clusterName)} and no other public reservation last in the project's first page of IPs`,
  );
}

/** EnsureNodeBGPEnabled: a 422 saying the device already has a session counts as success. */
export function isExistingBgpSession(status: number, message: string): boolean {
  return status === 422 && message.includes('already has session');
}

/** CAPP's requeue after a failed EIP assignment or BGP enablement. */
export const VIP_RETRY_MS = 20_000;

/**
 * What CAPP's PacketCluster controller (not played by the fixture) does first for a CPEM or
 * kube-vip cluster (client.go CreateIP): reserve one public IPv4 address in the metro, tagged for
 * the cluster. Tests call it where they create the PacketCluster: CAPP's machine reconcile looks
 * this reservation up for every CPEM machine once its device is active.
 */
export function reserveClusterEndpoint(
  metal: MetalClient,
  options: { readonly projectId: string; readonly clusterName: string; readonly metro: string },
): Promise<AnyIPReservation> {
  return metal.ipReservations.create(options.projectId, {
    type: 'public_ipv4',
    quantity: 1,
    metro: options.metro,
    fail_on_approval_required: true,
    tags: [elasticIpIdentifier(options.clusterName)],
  });
}

/**
 * What CAPP's PacketCluster controller (not played by the fixture) does for a KUBE_VIP cluster
 * before any machine (client.go EnableProjectBGP): unless the project already has a BGP config
 * that is not disabled, request local BGP. Tests call it where they create the PacketCluster;
 * without it every machine's BGP session is refused ("BGP is not enabled").
 */
export async function enableProjectBgp(metal: MetalClient, projectId: string): Promise<void> {
  const config = await findBgpConfigByProject(metal, projectId);
  if ((config.id ?? '') !== '' && config.status !== 'disabled') return;
  await requestLocalBgpConfig(metal, projectId);
}
