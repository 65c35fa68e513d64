import {
  CapiLabels,
  MachineNetworkEventReasons,
  MachineNetworkReasons,
  MachineNetworkType,
  NETWORK_GROUP,
  NETWORK_VERSION,
  NetworkFinalizers,
  PacketMachineTemplateType,
  PacketMachineType,
  type Machine,
  type MachineNetwork,
  type PacketMachine,
  type PacketMachineTemplate,
} from '@metal-l2/api';
import {
  PatchHelper,
  done,
  isAlreadyExists,
  isNotFound,
  requeueAfter,
  runSteps,
  type ReconcileContext,
  type ReconcileResult,
  type StepOutcome,
} from '@metal-l2/kube';
import { portCountOf } from '@metal-l2/metal-api';
import { IndexNames, type NetworkContext } from '../context.js';
import { linkStateOf, type LinkState } from '../template-link.js';
import { decidePause } from '../webhook/packet-machine-webhook.js';
import { configurePorts, driftCheckDelayMs, forgetDriftCheck } from './configure-ports.js';
import { releaseClaims, removeFinalizer, unassignVlans } from './deletion.js';
import { keepRecord, restoreRecord } from './durable-record.js';
import { afterMetalWait } from './port-driver.js';
import { desiredNetworkMode } from '../resolved-ports.js';
import { ensureClaims } from './ensure-claims.js';
import { clearHoldReason, holdAfterCreation, keepHeld, releaseUnlinked, type HeldMachine } from './hold-without-network.js';
import { machineHold } from '../hold.js';
import { shortNodeStartupWarning } from './health-check-warning.js';
import { ensureUserDataInjected } from './inject-user-data.js';
import { adoptClaims, handOverNetwork, handedOverRecord, machineOutlivesNetwork } from './keep-network.js';
import { releasePause } from './release-pause.js';
import { type MachineNetworkScope, type Step, summarizeReady } from './scope.js';
import { waitForAddresses } from './wait-for-addresses.js';

/** DESIGN §3.3, steps 2–5: each states its postcondition; a finished step reads and writes nothing. */
const normalSteps: readonly Step[] = [
  adoptClaims,
  ensureClaims,
  waitForAddresses,
  ensureUserDataInjected,
  releasePause,
  afterMetalWait(configurePorts),
];
/** Step 7: what we assigned goes, the addresses go back, then the object may go. */
const deleteSteps: readonly Step[] = [afterMetalWait(unassignVlans), releaseClaims, removeFinalizer];
/** The MachineNetwork alone is deleted while its machine lives: the network stays, for the next one to adopt. */
const keepSteps: readonly Step[] = [handOverNetwork, removeFinalizer];

/** The Machine that uses this PacketMachine: by spec.infrastructureRef (owner refs are missing while paused on CAPI ≤ 1.8). */
function findMachine(ctx: NetworkContext, namespace: string, name: string): Machine | undefined {
  const machines = ctx.caches.machines;
  if (machines === undefined) return undefined;
  return machines.byIndex(IndexNames.machineByInfraRef, `${namespace}/${name}`)[0];
}

function clusterPaused(ctx: NetworkContext, namespace: string, clusterName: string | undefined): boolean {
  if (clusterName === undefined) return false;
  return ctx.caches.clusters?.get({ namespace, name: clusterName })?.spec?.paused === true;
}

/** A new MachineNetwork for a linked PacketMachine: the template's spec copied, owned by the machine. */
function newMachineNetwork(pm: PacketMachine, templateName: string, spec: Omit<MachineNetwork['spec'], 'templateName'>): MachineNetwork {
  const clusterLabel = pm.metadata.labels?.[CapiLabels.clusterName];
  return {
    apiVersion: `${NETWORK_GROUP}/${NETWORK_VERSION}`,
    kind: 'MachineNetwork',
    metadata: {
      name: pm.metadata.name ?? '',
      namespace: pm.metadata.namespace ?? '',
      ...(clusterLabel === undefined ? {} : { labels: { [CapiLabels.clusterName]: clusterLabel } }),
      // A MachineNetwork deleted before this one left the record of the VLANs that are ours.
      annotations: handedOverRecord(pm),
      finalizers: [NetworkFinalizers.machineNetwork],
      ownerReferences: [
        {
          apiVersion: `${PacketMachineType.group}/${PacketMachineType.version}`,
          kind: PacketMachineType.kind,
          name: pm.metadata.name ?? '',
          uid: pm.metadata.uid ?? '',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: { templateName, ...structuredClone(spec) },
  };
}

/**
 * The machine's link, from the cache; a clone the webhook did not hold whose PacketMachineTemplate
 * the cache does not show yet (created a moment before it) is looked up live, as the webhook does:
 * it may be linked, and CAPP may create it at once.
 */
async function linkOf(ctx: NetworkContext, at: HeldMachine): Promise<LinkState> {
  const cached = linkStateOf(at.pm, (ns, n) => ctx.caches.packetMachineTemplates.get({ namespace: ns, name: n }));
  if (cached.kind !== 'unknown' || machineHold.isHeldByUs(at.pm)) return cached;
  const live = await ctx.client.get<PacketMachineTemplate>(PacketMachineTemplateType, cached.packetMachineTemplate, {
    signal: at.rctx.signal,
  });
  return linkStateOf(at.pm, () => live);
}

/**
 * The MachineNetwork of a PacketMachine that has none: created from its template when it is
 * linked. A held machine whose template (or PacketMachineTemplate) is not found stays held and
 * says why on the PacketMachine; one that is no longer linked is released. Once the
 * MachineNetwork exists it is the machine's network: the link is not read again.
 */
async function ensureMachineNetwork(ctx: NetworkContext, at: HeldMachine): Promise<MachineNetwork | ReconcileResult> {
  const link = await linkOf(ctx, at);
  if (link.kind === 'unlinked') return releaseUnlinked(at);
  if (link.kind === 'unknown') {
    const { namespace, name } = link.packetMachineTemplate;
    return keepHeld(
      at,
      MachineNetworkReasons.packetMachineTemplateNotFound,
      `PacketMachineTemplate ${namespace}/${name} it was cloned from is not found, so its MachineNetworkTemplate cannot be read; the machine stays paused until it exists or the machine is linked by its own annotation`,
    );
  }
  const templateName = link.templateName;
  if (decidePause(at.pm, { templateName, now: ctx.now() }).kind === 'pause') return holdAfterCreation(at, templateName);
  const template = ctx.caches.templates.get({ namespace: at.namespace, name: templateName });
  if (template === undefined) {
    return keepHeld(
      at,
      MachineNetworkReasons.templateNotFound,
      `MachineNetworkTemplate ${at.namespace}/${templateName} not found; the machine stays paused until it exists (or until the link is removed)`,
    );
  }
  try {
    const created = await ctx.client.create(MachineNetworkType, newMachineNetwork(at.pm, templateName, template.spec), {
      signal: at.rctx.signal,
    });
    at.rctx.logger.info('created MachineNetwork', { template: templateName });
    return created;
  } catch (err: unknown) {
    if (!isAlreadyExists(err)) throw new Error(`create MachineNetwork ${at.namespace}/${at.name}`, { cause: err });
    const live = await ctx.client.get<MachineNetwork>(
      MachineNetworkType,
      { namespace: at.namespace, name: at.name },
      { signal: at.rctx.signal },
    );
    return live ?? requeueAfter(1_000);
  }
}

/**
 * Reconciles the network of one PacketMachine (key = its namespace/name = its MachineNetwork's):
 * read from the caches; a machine going away takes its MachineNetwork with it (deleted while the
 * device still exists, so its VLANs can be unassigned); create the MachineNetwork from the
 * template; run the normal or the delete steps; patch status once at the end.
 */
export async function reconcileMachineNetwork(
  ctx: NetworkContext,
  key: { namespace: string; name: string },
  rctx: ReconcileContext,
): Promise<ReconcileResult> {
  const { namespace, name } = key;
  const pm = ctx.caches.packetMachines.get(key);
  const cached = ctx.caches.machineNetworks.get(key);
  let mn = cached === undefined ? undefined : ctx.ownWrites.fresher('', `${namespace}/${name}`, cached);
  if (pm === undefined && mn === undefined) return done();

  const clusterName = pm?.metadata.labels?.[CapiLabels.clusterName] ?? mn?.metadata.labels?.[CapiLabels.clusterName];
  if (clusterPaused(ctx, namespace, clusterName)) {
    rctx.logger.debug('cluster is paused', { cluster: clusterName });
    return done();
  }
  if (mn !== undefined && machineGone(pm, mn) && mn.metadata.deletionTimestamp === undefined)
    return deleteWithMachine(ctx, { key, machineNetwork: mn, rctx });
  if (mn === undefined) {
    if (pm === undefined || pm.metadata.deletionTimestamp !== undefined) return done();
    const ensured = await ensureMachineNetwork(ctx, { ctx, pm, machine: findMachine(ctx, namespace, name), namespace, name, rctx });
    if (!('apiVersion' in ensured)) return ensured;
    mn = ensured;
  }
  if (pm !== undefined && machineHold.reasonOf(pm) !== undefined) await clearHoldReason({ ctx, pm, namespace, name, rctx });

  const { scope, writes } = startScope(ctx, { key, rctx, packetMachine: pm, machineNetwork: mn, clusterName });
  restoreRecord(scope.machineNetwork);
  if (scope.machineNetwork.metadata.deletionTimestamp !== undefined) return runDeletion(scope, writes);
  return runNormal(scope, writes);
}

/** The PacketMachine is gone, going, or a new one of the same name (another uid) that does not own this MachineNetwork. */
function machineGone(pm: PacketMachine | undefined, mn: MachineNetwork): boolean {
  return (
    pm === undefined ||
    pm.metadata.deletionTimestamp !== undefined ||
    (pm.metadata.uid !== undefined && !(mn.metadata.ownerReferences ?? []).some((o) => o.uid === pm.metadata.uid))
  );
}

/** The MachineNetwork of a machine going away is deleted (this very version: uid precondition); its finalizer does the rest. */
async function deleteWithMachine(
  ctx: NetworkContext,
  { key, machineNetwork: mn, rctx }: { key: { namespace: string; name: string }; machineNetwork: MachineNetwork; rctx: ReconcileContext },
): Promise<ReconcileResult> {
  try {
    await ctx.client.delete(MachineNetworkType, key, {
      signal: rctx.signal,
      ...(mn.metadata.uid === undefined ? {} : { preconditions: { uid: mn.metadata.uid } }),
    });
  } catch (err: unknown) {
    if (!isNotFound(err)) throw new Error(`delete MachineNetwork ${key.namespace}/${key.name} of a deleted PacketMachine`, { cause: err });
  }
  return done();
}

/** The scope of one reconcile: a working copy of the MachineNetwork, and what was written of it so far. */
function startScope(
  ctx: NetworkContext,
  at: {
    readonly key: { namespace: string; name: string };
    readonly rctx: ReconcileContext;
    readonly packetMachine: PacketMachine | undefined;
    readonly machineNetwork: MachineNetwork;
    readonly clusterName: string | undefined;
  },
): { scope: MachineNetworkScope; writes: Writes } {
  const { namespace, name } = at.key;
  const pm = at.packetMachine;
  const writes: Writes = {
    patch: PatchHelper.snapshot(MachineNetworkType, at.machineNetwork),
    basedOn: at.machineNetwork.metadata.resourceVersion,
  };
  const scope: MachineNetworkScope = {
    ctx,
    rctx: at.rctx,
    namespace,
    name,
    packetMachine: pm,
    machineNetwork: structuredClone(at.machineNetwork),
    machine: pm === undefined ? undefined : findMachine(ctx, namespace, name),
    clusterName: at.clusterName,
    now: ctx.now(),
    checkpoint: () => write(scope, writes),
  };
  return { scope, writes };
}

/** Step 7, or the network handed over when the machine outlives its MachineNetwork. */
async function runDeletion(scope: MachineNetworkScope, writes: Writes): Promise<ReconcileResult> {
  const outcome = await runSteps(scope, machineOutlivesNetwork(scope) ? keepSteps : deleteSteps);
  if (outcome.kind === 'continue') {
    scope.ctx.ownWrites.forget('', `${scope.namespace}/${scope.name}`);
    forgetDriftCheck(scope);
    return done(); // finalizer removed: the object is gone
  }
  return finish(scope, writes, outcome);
}

/** Steps 2–5, then the status summary: the network type seen, the generation handled, Ready. */
async function runNormal(scope: MachineNetworkScope, writes: Writes): Promise<ReconcileResult> {
  const working = scope.machineNetwork;
  warnShortHealthCheck(scope);
  const outcome = await runSteps(scope, normalSteps);
  const status = (working.status ??= {});
  // On the device's plan once its ports were seen (a 2-port-looking template on a 4-port server
  // leaves bond1 as it was), else on the family the template names.
  const seen = status.ports ?? [];
  const mode = desiredNetworkMode(working.spec, seen.length === 0 ? undefined : portCountOf(seen.map((p) => p.name)));
  if (mode !== undefined) status.networkType = mode;
  status.observedGeneration = working.metadata.generation ?? 0;
  summarizeReady(working, scope.now, holdTimedOut(scope));
  return finish(scope, writes, outcome);
}

/** Once per machine while it is held: a MachineHealthCheck that would remediate it before it can join. */
function warnShortHealthCheck(scope: MachineNetworkScope): void {
  const { ctx, machine, packetMachine: pm, machineNetwork: mn } = scope;
  const uid = mn.metadata.uid ?? '';
  if (
    machine === undefined ||
    pm === undefined ||
    !machineHold.isHeldByUs(pm) ||
    ctx.healthCheckWarned.has(uid) ||
    ctx.caches.healthChecks === undefined
  )
    return;
  ctx.healthCheckWarned.add(uid);
  const warning = shortNodeStartupWarning({
    machine,
    healthChecks: ctx.caches.healthChecks.byIndex(IndexNames.healthCheckByCluster, `${scope.namespace}/${machine.spec.clusterName}`),
    holdTimeoutMs: ctx.timings.holdTimeoutMs,
    provisioningEstimateMs: ctx.timings.provisioningEstimateMs,
  });
  if (warning !== undefined)
    ctx.events.event(mn, { type: 'Warning', reason: MachineNetworkEventReasons.nodeStartupTimeoutTooShort, message: warning });
}

/** A machine still held after the hold budget: it stays paused (fail closed) and says so. */
function holdTimedOut(scope: MachineNetworkScope): { reason: string; message: string } | undefined {
  const pm = scope.packetMachine;
  if (pm === undefined || !machineHold.isHeldByUs(pm)) return undefined;
  const since = machineHold.heldSince(pm);
  if (Number.isNaN(since)) return undefined;
  const heldMs = scope.now.getTime() - since;
  if (heldMs < scope.ctx.timings.holdTimeoutMs) return undefined;
  const message = `held for ${Math.round(heldMs / 1000)} s (budget ${Math.round(scope.ctx.timings.holdTimeoutMs / 1000)} s) and still not released; the PacketMachine stays paused`;
  const previous = scope.machineNetwork.status?.conditions?.find((c) => c.type === 'Ready');
  if (previous?.reason !== MachineNetworkReasons.holdTimeout) {
    scope.ctx.events.event(scope.machineNetwork, { type: 'Warning', reason: MachineNetworkEventReasons.holdTimeout, message });
  }
  return { reason: MachineNetworkReasons.holdTimeout, message };
}

/** What this reconcile wrote of its MachineNetwork: the snapshot the next patch diffs against, and the version it replaces. */
interface Writes {
  patch: PatchHelper<MachineNetwork>;
  /** The version the next write replaces: the one the reconcile started from, then each one written. */
  basedOn: string | undefined;
}

/**
 * Sends what changed since the last write (and the durable record with it); the next write diffs
 * against its result. Each version written is remembered over the cache (ctx.ownWrites), so the
 * next reconcile does not act on the informer's older copy (miss the VLAN batch just started and
 * start another).
 */
async function write(scope: MachineNetworkScope, writes: Writes): Promise<void> {
  if (scope.machineNetwork.metadata.deletionTimestamp === undefined) keepRecord(scope.machineNetwork);
  const key = `${scope.namespace}/${scope.name}`;
  const current = await writes.patch.patch(scope.ctx.client, scope.machineNetwork, {
    signal: scope.rctx.signal,
    onWrite: (w) => {
      const written = w as MachineNetwork;
      scope.ctx.ownWrites.remember('', key, { basedOn: writes.basedOn, written });
      writes.basedOn = written.metadata.resourceVersion;
    },
  });
  writes.patch = PatchHelper.snapshot(MachineNetworkType, current);
}

async function finish(scope: MachineNetworkScope, writes: Writes, outcome: StepOutcome): Promise<ReconcileResult> {
  await write(scope, writes);
  switch (outcome.kind) {
    case 'continue': {
      // A configured machine comes back for its next drift check.
      const drift = scope.machineNetwork.metadata.deletionTimestamp === undefined ? driftCheckDelayMs(scope) : undefined;
      return drift === undefined ? done() : requeueAfter(drift);
    }
    case 'wait': {
      const hold =
        scope.packetMachine !== undefined && machineHold.isHeldByUs(scope.packetMachine) ? scope.ctx.timings.holdTimeoutMs : undefined;
      // A held machine comes back when its hold budget runs out, to report it.
      const afterMs = outcome.afterMs ?? hold;
      return afterMs === undefined ? done() : requeueAfter(afterMs);
    }
    case 'fail':
      throw outcome.error;
  }
}
