import { MachineNetworkEventReasons, NetworkLabels, PacketMachineType, deviceIdOf, type Machine, type PacketMachine } from '@metal-l2/api';
import { builtinTypes, done, requeueAfter, type ReconcileContext, type ReconcileResult, type Secret } from '@metal-l2/kube';
import { readInjectionHash } from '@metal-l2/machine-config';
import type { NetworkContext } from '../context.js';
import { holdReasonValue, machineHold, wakeMachine, type HoldWrite } from '../hold.js';

// A PacketMachine we hold before it has a MachineNetwork: the MachineNetwork's conditions cannot
// say why it waits, so the PacketMachine carries the reason (an annotation of ours, beside our
// hold marker; its conditions are CAPP's) and a Warning Event says it too. A machine that is no
// longer linked has no reason to be held: our pause goes.

export interface HeldMachine {
  readonly ctx: NetworkContext;
  readonly pm: PacketMachine;
  readonly machine: Machine | undefined;
  readonly namespace: string;
  readonly name: string;
  readonly rctx: ReconcileContext;
}

/** How often a machine held for a missing template looks again (templates are watched too). */
const MISSING_TEMPLATE_RECHECK_MS = 30_000;

/**
 * The machine stays held for `reason`: a Warning Event, and the hold-reason annotation when the
 * hold is ours (someone else's pause is not ours to explain).
 */
export async function keepHeld(at: HeldMachine, reason: string, message: string): Promise<ReconcileResult> {
  at.ctx.events.event(at.pm, { type: 'Warning', reason, message });
  if (machineHold.isHeldByUs(at.pm)) {
    await written(at, 'note why it holds PacketMachine', (w) => machineHold.writeReason(w, at.pm, holdReasonValue(reason, message)));
  }
  return requeueAfter(MISSING_TEMPLATE_RECHECK_MS);
}

/**
 * A machine held by us that nothing links any more (its annotation was removed, e.g. a typo
 * corrected by unlinking): our pause and marker go, so CAPP creates it as a plain machine. Only
 * while it has no device and its bootstrap data carries nothing of ours: a machine whose user data
 * already has our network configuration would boot with VLAN interfaces no port was configured
 * for, so it stays held and says so.
 */
export async function releaseUnlinked(at: HeldMachine): Promise<ReconcileResult> {
  if (!machineHold.isHeldByUs(at.pm) || deviceIdOf(at.pm) !== undefined) return done();
  const injected = await injectedSecret(at);
  if (injected !== undefined) {
    return keepHeld(
      at,
      MachineNetworkEventReasons.injectionRefused,
      `no longer linked to a MachineNetworkTemplate, but bootstrap data Secret ${at.namespace}/${injected} already carries a network configuration; the machine stays paused: link it again, or remove the pause yourself`,
    );
  }
  // Guarded by the resourceVersion: a link added back meanwhile must win over the release.
  await written(at, 'release the pause of unlinked PacketMachine', (w) => machineHold.release(w, at.pm));
  at.ctx.events.event(at.pm, {
    type: 'Normal',
    reason: MachineNetworkEventReasons.pauseReleased,
    message: 'no longer linked to a MachineNetworkTemplate; released the pause, the machine is created without a MachineNetwork',
  });
  at.rctx.logger.info('released the pause of an unlinked machine', {});
  if (at.machine !== undefined && at.ctx.types.machine !== undefined) {
    const machine = { namespace: at.namespace, name: at.machine.metadata.name ?? '', now: at.ctx.now() };
    await wakeMachine({ client: at.ctx.client, type: at.ctx.types.machine, rctx: at.rctx }, machine);
  }
  return done();
}

/**
 * A linked machine that was admitted without our hold and has no device yet: the webhook did not
 * hold it (a clone in a namespace without the network.metal.x-k8s.io/enabled label is admitted
 * while the webhook is down, or the webhook does not reach its namespace). It is held now, as the
 * webhook would have (guarded by its resourceVersion: a device CAPP recorded meanwhile wins), and a
 * Warning says so. CAPP may already be creating the server: then the MachineNetwork reports
 * ProvisionedWithoutInjection, never a silent boot without the network.
 */
export async function holdAfterCreation(at: HeldMachine, templateName: string): Promise<ReconcileResult> {
  await written(at, 'hold PacketMachine admitted without the hold', (w) => machineHold.take(w, at.pm, at.ctx.now()));
  at.ctx.events.event(at.pm, {
    type: 'Warning',
    reason: MachineNetworkEventReasons.heldAfterCreation,
    message:
      `linked to MachineNetworkTemplate ${at.namespace}/${templateName} but created without the hold (the webhook did not hold it: ` +
      `it was not answering, and namespace ${at.namespace} is not labelled ${NetworkLabels.enabled}=true); held now. ` +
      `If CAPP created the server first, it boots without its network (ProvisionedWithoutInjection). ` +
      `Label the namespace so that a webhook that is down refuses such machines instead`,
  });
  at.rctx.logger.info('held a linked machine admitted without the hold', { template: templateName });
  // Our patch's event brings the next reconcile, which sees the hold.
  return done();
}

/** The hold-reason annotation goes once the MachineNetwork exists: its conditions take over. */
export async function clearHoldReason(at: Omit<HeldMachine, 'machine'>): Promise<void> {
  await written(at, 'clear the hold reason of PacketMachine', (w) => machineHold.writeReason(w, at.pm, null));
}

/** Runs one write of the hold with the PacketMachine's client and type; its error says what it attempted. */
async function written(at: Omit<HeldMachine, 'machine'>, what: string, write: (w: HoldWrite) => Promise<unknown>): Promise<void> {
  try {
    await write({ client: at.ctx.client, type: PacketMachineType, rctx: at.rctx });
  } catch (err: unknown) {
    throw new Error(`${what} ${at.namespace}/${at.name}`, { cause: err });
  }
}

/** The Machine's bootstrap Secret when it carries our injection marker (left by an earlier MachineNetwork). */
async function injectedSecret(at: HeldMachine): Promise<string | undefined> {
  const name = at.machine?.spec.bootstrap.dataSecretName;
  if (name === undefined || name === '') return undefined;
  const secret = await at.ctx.client.get<Secret>(builtinTypes.secret, { namespace: at.namespace, name }, { signal: at.rctx.signal });
  const value = secret?.data?.['value'];
  if (value === undefined) return undefined;
  return readInjectionHash(Buffer.from(value, 'base64').toString('utf8')) === undefined ? undefined : name;
}
