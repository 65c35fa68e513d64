// One informer per kind the fixture reads, shared by its two controllers (as a manager's cache is).
import {
  PacketClusterType,
  PacketMachineType,
  clusterType,
  machineType,
  type CapiCoreVersion,
  type Cluster,
  type Machine,
  type PacketCluster,
  type PacketMachine,
} from '@metal-l2/api';
import { Informer, type KubeClient, type Logger } from '@metal-l2/kube';

export interface FixtureInformers {
  readonly packetMachines: Informer<PacketMachine>;
  readonly machines: Informer<Machine>;
  readonly clusters: Informer<Cluster>;
  readonly packetClusters: Informer<PacketCluster>;
}

export function createFixtureInformers(options: {
  client: KubeClient;
  capiVersion: CapiCoreVersion;
  namespace?: string | undefined;
  logger: Logger;
}): FixtureInformers {
  const common = {
    client: options.client,
    logger: options.logger,
    ...(options.namespace !== undefined ? { namespace: options.namespace } : {}),
  };
  return {
    packetMachines: new Informer<PacketMachine>({ ...common, type: PacketMachineType }),
    machines: new Informer<Machine>({ ...common, type: machineType(options.capiVersion) }),
    clusters: new Informer<Cluster>({ ...common, type: clusterType(options.capiVersion) }),
    packetClusters: new Informer<PacketCluster>({ ...common, type: PacketClusterType }),
  };
}
