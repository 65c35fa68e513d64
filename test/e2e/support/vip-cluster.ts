import * as k8s from '@kubernetes/client-node';
import { waitFor } from '@metal-l2/test-support/wait-for';
import { CLUSTER, netKinds, poolRef, type NetworkWorld } from './network-world.js';

// The world's Cluster on a VIP of ours: a one-address pool on VLAN 1000's subnet, a
// ClusterEndpointTemplate, and the Cluster linked to it after its creation (so not held), as a
// user links a running Cluster.

export const ENDPOINT_TEMPLATE_ANNOTATION = 'network.metal.x-k8s.io/endpoint-template';

/** Links the world's Cluster to a ClusterEndpointTemplate on VLAN 1000 giving `vip`; resolves once the Cluster's endpoint is it. */
export async function linkClusterToVip(world: NetworkWorld, at: { readonly vip: string; readonly virtualRouterID: number }): Promise<void> {
  await world.objects.create(netKinds.pool, {
    metadata: { name: 'cp-vip', namespace: world.ns },
    spec: { addresses: [at.vip], prefix: 24, gateway: '192.168.10.1' },
  });
  await world.objects.create(netKinds.endpointTemplate, {
    metadata: { name: 'cp-vip', namespace: world.ns },
    spec: { vxlan: 1000, addressFromPool: poolRef('cp-vip'), virtualRouterID: at.virtualRouterID },
  });
  await world.objects.patch(netKinds.cluster, CLUSTER, world.ns, {
    metadata: { annotations: { [ENDPOINT_TEMPLATE_ANNOTATION]: 'cp-vip' } },
  });
  await waitFor(
    `Cluster ${CLUSTER} on the VIP ${at.vip}`,
    async () => (await world.objects.get(netKinds.cluster, CLUSTER, world.ns))?.spec?.controlPlaneEndpoint?.host === at.vip,
    { timeoutMs: 30_000 },
  );
}

/** A machine's bootstrap data Secret (`<machine>-bootstrap`) as it is now: its decoded value and its resourceVersion. */
export async function bootstrapSecret(world: NetworkWorld, machine: string): Promise<{ value: string; resourceVersion: string }> {
  const secret = await world.kc.makeApiClient(k8s.CoreV1Api).readNamespacedSecret({ namespace: world.ns, name: `${machine}-bootstrap` });
  return {
    value: Buffer.from(secret.data?.['value'] ?? '', 'base64').toString('utf8'),
    resourceVersion: secret.metadata?.resourceVersion ?? '',
  };
}

/** The bootstrap data of a machine as the controller left it, with every base64 file content decoded beside it. */
export async function injectedText(world: NetworkWorld, machine: string): Promise<string> {
  const { value } = await bootstrapSecret(world, machine);
  const decoded = [...value.matchAll(/content: ([A-Za-z0-9+/=]+)$/gm)].map((m) => Buffer.from(m[1] ?? '', 'base64').toString('utf8'));
  return [value, ...decoded].join('\n');
}
