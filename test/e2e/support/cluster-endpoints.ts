import type { Kind, Obj } from '@metal-l2/test-support/objects';
import { waitFor } from '@metal-l2/test-support/wait-for';
import { eventsOf } from './network-probes.js';
import { CAPP_TOKEN, condition, netKinds, poolRef, provisionWorkloadCluster, type NetworkWorld } from './network-world.js';

// What the Cluster endpoint tests make and read: endpoint pools and templates, Clusters linked to
// them, their ClusterEndpoints' conditions, the hold, and the Events the controller recorded.

export const TEMPLATE_ANNOTATION = 'network.metal.x-k8s.io/endpoint-template';
export const HOLD = 'network.metal.x-k8s.io/endpoint-hold';
export const HOLD_REASON = 'network.metal.x-k8s.io/endpoint-hold-reason';

export const addressKind: Kind = {
  group: 'ipam.cluster.x-k8s.io',
  version: 'v1beta2',
  plural: 'ipaddresses',
  kind: 'IPAddress',
  namespaced: true,
};

export function held(c: Obj): boolean {
  return c.spec?.paused === true && c.metadata.annotations?.[HOLD] !== undefined;
}

/** The helpers, bound to one test file's world. */
export function clusterEndpoints(world: NetworkWorld) {
  const cluster = async (name: string): Promise<Obj> => {
    const c = await world.objects.get(netKinds.cluster, name, world.ns);
    if (c === undefined) throw new Error(`Cluster ${name} not found`);
    return c;
  };
  const eventReasons = (name: string): string[] => eventsOf(world, name).map((e) => e.reason ?? '');
  return {
    cluster,
    eventReasons,
    createEndpointPool: async (name: string, addresses: string[], gateway = '192.168.40.1'): Promise<void> => {
      await world.objects.create(netKinds.pool, { metadata: { name, namespace: world.ns }, spec: { addresses, prefix: 24, gateway } });
    },
    createEndpointTemplate: async (name: string, pool: string, extra: Record<string, unknown> = {}): Promise<void> => {
      await world.objects.create(netKinds.endpointTemplate, {
        metadata: { name, namespace: world.ns },
        spec: { vxlan: 1000, addressFromPool: poolRef(pool), ...extra },
      });
    },
    createCluster: async (name: string, template: string, endpoint?: { host: string; port: number }): Promise<Obj> => {
      return world.objects.create(netKinds.cluster, {
        metadata: { name, namespace: world.ns, annotations: { [TEMPLATE_ANNOTATION]: template } },
        spec: {
          infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'PacketCluster', name },
          ...(endpoint === undefined ? {} : { controlPlaneEndpoint: endpoint }),
        },
      });
    },
    /** A workload cluster as CAPI and CAPP have it before any machine (provisionWorkloadCluster), linked to `template`. */
    provisionLinkedCluster: async (name: string, template: string, endpoint?: { host: string; port: number }): Promise<void> => {
      await provisionWorkloadCluster({
        kc: world.kc,
        objects: world.objects,
        namespace: world.ns,
        metalBaseUrl: world.sim.baseUrl,
        token: CAPP_TOKEN,
        name,
        annotations: { [TEMPLATE_ANNOTATION]: template },
        ...(endpoint === undefined ? {} : { controlPlaneEndpoint: endpoint }),
      });
    },
    waitEndpointReason: async (name: string, type: string, reason: string, timeoutMs = 30_000): Promise<Obj> => {
      return waitFor(
        `ClusterEndpoint ${name} ${type} ${reason}`,
        async () => {
          const ep = await world.objects.get(netKinds.clusterEndpoint, name, world.ns);
          if (ep !== undefined && condition(ep, type)?.reason === reason) return ep;
          throw new Error(ep === undefined ? 'no ClusterEndpoint' : JSON.stringify(ep.status ?? 'no status'));
        },
        { timeoutMs, intervalMs: 200 },
      );
    },
    waitForEvent: async (name: string, reason: string): Promise<void> => {
      await waitFor(`a ${reason} Event on ${name}`, () => eventReasons(name).includes(reason), { timeoutMs: 10_000 });
    },
    /** The Cluster's hold-reason annotation once it starts with `reason:`. */
    holdReasonOf: async (name: string, reason: string, timeoutMs = 10_000): Promise<string> => {
      return waitFor(
        `the hold reason ${reason} on Cluster ${name}`,
        async () => {
          const value = (await cluster(name)).metadata.annotations?.[HOLD_REASON];
          return value?.startsWith(`${reason}: `) === true ? value : false;
        },
        { timeoutMs },
      );
    },
  };
}
