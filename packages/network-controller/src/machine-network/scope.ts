import type { Machine, MachineNetwork, PacketMachine } from '@metal-l2/api';
import type { ReconcileContext, Step as KubeStep } from '@metal-l2/kube';
import type { NetworkContext } from '../context.js';

/**
 * What one reconcile of a machine read, gathered once so the steps do not read the world again:
 * the PacketMachine, its MachineNetwork (a working copy whose status the steps edit in memory and
 * the runner patches once), and the CAPI Machine when it exists.
 */
export interface MachineNetworkScope {
  readonly ctx: NetworkContext;
  readonly rctx: ReconcileContext;
  readonly namespace: string;
  readonly name: string;
  readonly packetMachine: PacketMachine | undefined;
  readonly machineNetwork: MachineNetwork;
  readonly machine: Machine | undefined;
  readonly clusterName: string | undefined;
  readonly now: Date;
  /**
   * Writes the working copy now (with its durable record) instead of only at the end: for what
   * must be on the API server before an action outside it (a VLAN batch) can happen.
   */
  readonly checkpoint: () => Promise<void>;
}

export type Step = KubeStep<MachineNetworkScope>;

/** `namespace/name` for messages. */
export function describe(scope: Pick<MachineNetworkScope, 'namespace' | 'name'>, name = scope.name): string {
  return `${scope.namespace}/${name}`;
}
