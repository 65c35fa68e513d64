import type { Condition } from './condition.js';
import type { V1Beta1Condition } from './capi.js';
import type { KubeObject, ResourceType } from './object-meta.js';

// The Cluster API Provider Packet (CAPP v0.9.0) kinds the network controller reads and writes,
// as served by its CRDs (infrastructure.cluster.x-k8s.io/v1beta1). Only the fields we use.

export const CAPP_GROUP = 'infrastructure.cluster.x-k8s.io';
export const CAPP_VERSION = 'v1beta1';

export const PacketMachineType = {
  group: CAPP_GROUP,
  version: CAPP_VERSION,
  kind: 'PacketMachine',
  plural: 'packetmachines',
  namespaced: true,
} as const satisfies ResourceType;

export const PacketMachineTemplateType = {
  group: CAPP_GROUP,
  version: CAPP_VERSION,
  kind: 'PacketMachineTemplate',
  plural: 'packetmachinetemplates',
  namespaced: true,
} as const satisfies ResourceType;

export const PacketClusterType = {
  group: CAPP_GROUP,
  version: CAPP_VERSION,
  kind: 'PacketCluster',
  plural: 'packetclusters',
  namespaced: true,
} as const satisfies ResourceType;

/** CAPP writes this prefix before the device id in spec.providerID. */
export const PROVIDER_ID_PREFIX = 'equinixmetal://';

export interface PacketMachineSpec {
  machineType?: string;
  metro?: string;
  facility?: string;
  os?: string;
  billingCycle?: string;
  providerID?: string;
  hardwareReservationID?: string;
  ipxeURL?: string;
  sshKeys?: string[];
  tags?: string[];
}

export interface PacketMachine extends KubeObject {
  spec: PacketMachineSpec;
  status?: {
    ready?: boolean;
    instanceStatus?: string;
    addresses?: { type: string; address: string }[];
    failureReason?: string;
    failureMessage?: string;
    conditions?: (Condition | V1Beta1Condition)[];
  };
}

export interface PacketMachineTemplate extends KubeObject {
  spec: { template: { spec: PacketMachineSpec } };
}

export interface PacketCluster extends KubeObject {
  spec: {
    projectID: string;
    metro?: string;
    facility?: string;
    controlPlaneEndpoint?: { host: string; port: number };
    vipManager?: string;
  };
  status?: { ready?: boolean; conditions?: (Condition | V1Beta1Condition)[] };
}

/** The device id in a PacketMachine's providerID, or undefined before CAPP has created the device. */
export function deviceIdOf(machine: Pick<PacketMachine, 'spec'>): string | undefined {
  const id = machine.spec.providerID;
  if (id === undefined || id === '') return undefined;
  return id.startsWith(PROVIDER_ID_PREFIX) ? id.slice(PROVIDER_ID_PREFIX.length) : id;
}
