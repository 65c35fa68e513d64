import { CapiAnnotations, MachineNetworkEventReasons, NetworkAnnotations, PacketMachineType } from '@metal-l2/api';
import { describe, failed, proceed, type MachineNetworkScope, type StepOutcome } from './scope.js';

/**
 * Postcondition: our hold on the PacketMachine is gone (only a pause carrying our marker is ever
 * removed), and the Machine carries the injected hash in an annotation. That write is what wakes
 * the Cluster API ≤ 1.8 Machine controller, which skipped the paused PacketMachine and would
 * otherwise set its owner reference (and so let CAPP create the device) only on its next resync.
 */
export async function releasePause(scope: MachineNetworkScope): Promise<StepOutcome> {
  const { ctx, packetMachine: pm, machine, machineNetwork: mn } = scope;
  const hash = mn.status?.userData?.hash;
  if (pm === undefined || hash === undefined) return proceed;
  const annotations = pm.metadata.annotations ?? {};
  if (annotations[NetworkAnnotations.hold] !== undefined) {
    try {
      await ctx.client.patch(
        PacketMachineType,
        { namespace: scope.namespace, name: scope.name },
        { metadata: { annotations: { [CapiAnnotations.paused]: null, [NetworkAnnotations.hold]: null } } },
        { ...(pm.metadata.resourceVersion === undefined ? {} : { resourceVersion: pm.metadata.resourceVersion }), signal: scope.rctx.signal },
      );
    } catch (err: unknown) {
      return failed(new Error(`release the pause of PacketMachine ${describe(scope)}`, { cause: err }));
    }
    ctx.events.event(pm, { type: 'Normal', reason: MachineNetworkEventReasons.pauseReleased, message: 'network configuration injected; released the pause' });
    scope.rctx.logger.info('released the pause', {});
  }
  if (machine !== undefined && ctx.types.machine !== undefined && machine.metadata.annotations?.[NetworkAnnotations.networkConfig] !== hash) {
    try {
      await ctx.client.patch(
        ctx.types.machine,
        { namespace: scope.namespace, name: machine.metadata.name ?? '' },
        { metadata: { annotations: { [NetworkAnnotations.networkConfig]: hash } } },
        { signal: scope.rctx.signal },
      );
    } catch (err: unknown) {
      return failed(new Error(`annotate Machine ${describe(scope, machine.metadata.name)} with the network configuration`, { cause: err }));
    }
  }
  return proceed;
}
