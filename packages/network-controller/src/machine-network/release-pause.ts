import {
  MachineNetworkEventReasons,
  NetworkAnnotations,
  PacketMachineType,
  deviceIdOf,
  type Machine,
  type PacketMachine,
} from '@metal-l2/api';
import { failed, proceed, type StepOutcome, waitFor } from '@metal-l2/kube';
import { machineHold, wakeMachine } from '../hold.js';
import { describe, type MachineNetworkScope } from './scope.js';

function ownedByMachine(pm: PacketMachine, machine: Machine): boolean {
  return (pm.metadata.ownerReferences ?? []).some((o) => o.kind === 'Machine' && o.controller === true && o.uid === machine.metadata.uid);
}

/**
 * Postcondition: our hold on the PacketMachine is gone (only a pause carrying our marker is ever
 * removed), and Cluster API has adopted it (its Machine is the controller owner), so CAPP will
 * create the device. The Cluster API ≤ 1.8 Machine controller skipped the PacketMachine while it
 * was paused and is not woken by its unpausing (it watches infrastructure machines by owner), so
 * the Machine is annotated to wake it; if its cache was still behind, it is woken again later.
 */
export async function releasePause(scope: MachineNetworkScope): Promise<StepOutcome> {
  const { ctx, packetMachine: pm, machine, machineNetwork: mn } = scope;
  const hash = mn.status?.userData?.hash;
  if (pm === undefined || hash === undefined || deviceIdOf(pm) !== undefined) return proceed;
  if (machineHold.hasMarker(pm)) {
    try {
      await machineHold.release({ client: ctx.client, type: PacketMachineType, rctx: scope.rctx }, pm);
    } catch (err: unknown) {
      return failed(new Error(`release the pause of PacketMachine ${describe(scope)}`, { cause: err }));
    }
    ctx.events.event(pm, {
      type: 'Normal',
      reason: MachineNetworkEventReasons.pauseReleased,
      message: 'network configuration injected; released the pause',
    });
    scope.rctx.logger.info('released the pause', {});
  }
  if (machine === undefined || ctx.types.machine === undefined || ownedByMachine(pm, machine)) return proceed;

  const machineAnnotations = machine.metadata.annotations ?? {};
  const wokenAt = Date.parse(machineAnnotations[NetworkAnnotations.wokenAt] ?? '');
  const interval = ctx.timings.wakeIntervalMs;
  const first = machineAnnotations[NetworkAnnotations.networkConfig] !== hash;
  if (!first && !Number.isNaN(wokenAt) && scope.now.getTime() - wokenAt < interval) return waitFor(interval);
  try {
    const at = {
      namespace: scope.namespace,
      name: machine.metadata.name ?? '',
      now: scope.now,
      annotations: { [NetworkAnnotations.networkConfig]: hash },
    };
    await wakeMachine({ client: ctx.client, type: ctx.types.machine, rctx: scope.rctx }, at);
  } catch (err: unknown) {
    return failed(err);
  }
  return waitFor(interval);
}
