import {
  MachineNetworkConditionTypes,
  MachineNetworkEventReasons,
  MachineNetworkReasons,
  deviceIdOf,
  type Machine,
  type MachineNetwork,
} from '@metal-l2/api';
import {
  builtinTypes,
  failed,
  isForbidden,
  isKubeApiError,
  type Secret,
  type Phase,
  proceed,
  type StepOutcome,
  waitFor,
} from '@metal-l2/kube';
import {
  injectUserData,
  readInjectionHash,
  renderMachineNetwork,
  type InjectRefusalReason,
  type PortConfig,
  type RenderedNetwork,
} from '@metal-l2/machine-config';
import { announcerFor, type Announcement } from './endpoint-announcer.js';
import { IndexNames } from '../context.js';
import { checkInjected, injectionRecord, type UserDataRecord } from './injected-config.js';
import { networkConfigOf } from '../resolved-ports.js';
import { describe, type MachineNetworkScope, markCondition } from './scope.js';

/** The API server's limit on a Secret: the decoded bytes of all its data values together (corev1 MaxSecretSize). */
export const MAX_SECRET_BYTES = 1024 * 1024;

/** How big the Secret's data would be with `value` replaced, counted as the API server counts it. */
function dataBytesWith(secret: Secret, value: string): number {
  let total = Buffer.byteLength(value, 'utf8');
  for (const [key, encoded] of Object.entries(secret.data ?? {})) if (key !== 'value') total += Buffer.from(encoded, 'base64').length;
  return total;
}

/** Why the API server would refuse our patch of this Secret, before we send it; undefined when it would not. */
function unwritable(
  scope: MachineNetworkScope,
  secret: Secret,
  value: string | undefined,
): { reason: string; message: string } | undefined {
  const name = describe(scope, secret.metadata.name);
  if (secret.immutable === true) {
    return {
      reason: MachineNetworkReasons.bootstrapSecretImmutable,
      message: `bootstrap data Secret ${name} is immutable (immutable: true), so the network configuration cannot be written into it; give the Machine a bootstrap Secret that is not immutable`,
    };
  }
  if (value === undefined) return undefined;
  const bytes = dataBytesWith(secret, value);
  if (bytes <= MAX_SECRET_BYTES) return undefined;
  return {
    reason: MachineNetworkReasons.bootstrapSecretTooLarge,
    message: `injecting the network configuration would make bootstrap data Secret ${name} ${bytes} bytes, over the API server's limit of ${MAX_SECRET_BYTES} bytes (${bytes - MAX_SECRET_BYTES} too many); shrink the bootstrap data`,
  };
}

const decode = (value: string | undefined): string | undefined =>
  value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8');

function notInjected(scope: MachineNetworkScope, reason: string, message: string): void {
  markCondition(scope.machineNetwork, { type: MachineNetworkConditionTypes.userDataInjected, status: 'False', reason, message }, scope.now);
}

/**
 * Why this Secret may not be written for this Machine, or undefined when it may. A Secret written
 * by another bootstrap config (or one several Machines share) would leak this machine's addresses
 * into other machines' first boot; a MachinePool's is rewritten whole on token rotation.
 */
function ownershipProblem(scope: MachineNetworkScope, machine: Machine, secret: Secret): string | undefined {
  const controller = (secret.metadata.ownerReferences ?? []).find((o) => o.controller === true);
  const configRef = machine.spec.bootstrap.configRef;
  if (controller?.kind === 'MachinePool')
    return `Secret ${describe(scope, secret.metadata.name)} belongs to a MachinePool, whose bootstrap data is regenerated`;
  if (configRef !== undefined) {
    if (controller === undefined || controller.kind !== configRef.kind || controller.name !== configRef.name) {
      return `Secret ${describe(scope, secret.metadata.name)} is not owned by this Machine's bootstrap config ${configRef.kind}/${configRef.name}`;
    }
    return undefined;
  }
  const sharing = (
    scope.ctx.caches.machines?.byIndex(IndexNames.machineByDataSecret, `${scope.namespace}/${secret.metadata.name ?? ''}`) ?? []
  ).filter((m) => m.metadata.uid !== machine.metadata.uid);
  if (sharing.length > 0) {
    return `Secret ${describe(scope, secret.metadata.name)} is the bootstrap data of other Machines too (${sharing.map((m) => m.metadata.name).join(', ')}); give each Machine its own`;
  }
  return undefined;
}

/**
 * Postcondition: the Machine's bootstrap data Secret carries this machine's network configuration
 * (cloud-config: wrapped around the original data, which stays byte for byte; Ignition: appended to
 * the JSON, CABPK's entries unchanged), and status.userData records the
 * Secret, the bytes' hash, the renderer version, the fingerprint of what the OS is given and the
 * endpoint it announces. Once the device exists the Secret is never touched again (its user data
 * was consumed at creation): what it booted with is compared with what it would be given now.
 */
export async function ensureUserDataInjected(scope: MachineNetworkScope): Promise<StepOutcome> {
  const { ctx, machineNetwork: mn, packetMachine: pm } = scope;
  const status = (mn.status ??= {});
  const config = networkConfigOf(mn.spec, status.addresses ?? [], ctx.metadataUrl);
  const rendered = renderMachineNetwork(config);
  if (rendered.kind === 'invalid') {
    notInjected(scope, MachineNetworkReasons.invalidTemplate, rendered.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
    return waitFor();
  }
  const provisioned = pm !== undefined && deviceIdOf(pm) !== undefined;
  const announced = announcerFor(scope, config.ports);
  // Only a machine still to be created waits for its announcer: a provisioned one booted with what it booted with.
  if ('wait' in announced && !provisioned) {
    notInjected(scope, announced.wait.reason, announced.wait.message);
    return waitFor();
  }
  const injected: Injected = {
    ports: config.ports,
    network: rendered.network,
    announcement: 'next' in announced ? announced.next : undefined,
  };
  // The device booted with what was injected: compared with what it would be given now.
  if (provisioned && status.userData?.hash !== undefined)
    return checkInjected(scope, {
      ports: injected.ports,
      network: injected.network,
      current: injected.announcement,
      message: `Secret ${status.userData.secretName ?? ''} carries the network configuration (sha256:${status.userData.hash.slice(0, 12)})`,
    });
  const found = await findBootstrapSecret(scope, provisioned);
  if ('stop' in found) return found.stop;
  // Only a provisioned machine goes on without a Secret.
  if (provisioned || found.next === undefined) return adoptProvisioned(scope, found.next?.secret, injected);
  const value = writableValue(scope, found.next);
  if ('stop' in value) return value.stop;
  const written = await writeInjected(scope, found.next, { value: value.next, injected });
  if ('stop' in written) return written.stop;
  return recordInjected(scope, injectionRecord({ secretName: found.next.secretName, hash: written.next, ...injected }));
}

/** What this release gives the machine: its ports (with addresses), their rendering, and a control plane's announcer. */
interface Injected {
  readonly ports: readonly PortConfig[];
  readonly network: RenderedNetwork;
  readonly announcement: Announcement | undefined;
}

/** The Machine's bootstrap data Secret, as it is now. */
interface BootstrapSecret {
  readonly machine: Machine;
  readonly secretName: string;
  readonly secret: Secret;
}

/**
 * The bootstrap data Secret, read live: a cached Secret could be older than the one CAPP reads
 * when it creates the device. A provisioned machine without a Machine or a Secret name goes on
 * with none (undefined) to be adopted; an unprovisioned one waits for them.
 */
async function findBootstrapSecret(scope: MachineNetworkScope, provisioned: boolean): Promise<Phase<BootstrapSecret | undefined>> {
  const { ctx, machine } = scope;
  if (machine === undefined) {
    if (provisioned) return { next: undefined };
    notInjected(scope, MachineNetworkReasons.waitingForMachine, 'waiting for the Cluster API Machine that uses this PacketMachine');
    return { stop: waitFor() };
  }
  const secretName = machine.spec.bootstrap.dataSecretName;
  if (secretName === undefined || secretName === '') {
    if (provisioned) return { next: undefined };
    notInjected(
      scope,
      MachineNetworkReasons.waitingForBootstrapData,
      `waiting for Machine ${describe(scope, machine.metadata.name)} to get its bootstrap data (spec.bootstrap.dataSecretName)`,
    );
    return { stop: waitFor() };
  }
  const secret = await ctx.client.get<Secret>(
    builtinTypes.secret,
    { namespace: scope.namespace, name: secretName },
    { signal: scope.rctx.signal },
  );
  if (secret === undefined) {
    notInjected(scope, MachineNetworkReasons.bootstrapSecretNotFound, `bootstrap data Secret ${describe(scope, secretName)} not found`);
    return { stop: waitFor(10_000) };
  }
  return { next: { machine, secretName, secret } };
}

/** The Secret's user data, when the Secret is this Machine's own, may be written and has a value. */
function writableValue(scope: MachineNetworkScope, { machine, secretName, secret }: BootstrapSecret): Phase<string> {
  const problem = ownershipProblem(scope, machine, secret);
  if (problem !== undefined) {
    notInjected(scope, MachineNetworkReasons.bootstrapSecretNotOwned, problem);
    scope.ctx.events.event(scope.machineNetwork, {
      type: 'Warning',
      reason: MachineNetworkEventReasons.injectionRefused,
      message: problem,
    });
    return { stop: waitFor() };
  }
  const immutable = unwritable(scope, secret, undefined);
  if (immutable !== undefined) return { stop: refuse(scope, immutable) };
  const value = decode(secret.data?.['value']);
  if (value === undefined) {
    notInjected(
      scope,
      MachineNetworkReasons.bootstrapSecretNotFound,
      `bootstrap data Secret ${describe(scope, secretName)} has no key value`,
    );
    return { stop: waitFor() };
  }
  return { next: value };
}

/** The condition reasons of refusals that have their own; the others say UnsupportedFormat. */
const REFUSAL_REASONS: Partial<Record<InjectRefusalReason, string>> = {
  IgnitionNotSupported: MachineNetworkReasons.ignitionNotSupported,
  IgnitionNeedsNetworkd: MachineNetworkReasons.ignitionNeedsNetworkd,
  AnnouncerImageNotConfigured: MachineNetworkReasons.announcerImageNotConfigured,
};

/** Wraps the user data around the network configuration and writes it when it changed; gives the configuration's hash. */
async function writeInjected(
  scope: MachineNetworkScope,
  { secretName, secret }: BootstrapSecret,
  input: { readonly value: string; readonly injected: Injected },
): Promise<Phase<string>> {
  const { ctx, machineNetwork: mn } = scope;
  const announcer = input.injected.announcement?.announcer;
  const result = injectUserData({
    value: input.value,
    format: decode(secret.data?.['format']),
    network: input.injected.network,
    ...(announcer === undefined ? {} : { announcer }),
    ...(ctx.announcerImage === undefined ? {} : { announcerImage: ctx.announcerImage }),
  });
  switch (result.kind) {
    case 'refused': {
      const reason = REFUSAL_REASONS[result.reason] ?? MachineNetworkReasons.unsupportedFormat;
      notInjected(scope, reason, result.message);
      ctx.events.event(mn, { type: 'Warning', reason: MachineNetworkEventReasons.injectionRefused, message: result.message });
      return { stop: waitFor() };
    }
    case 'unchanged':
      return { next: result.hash };
    case 'injected': {
      const problem = unwritable(scope, secret, result.value);
      if (problem !== undefined) return { stop: refuse(scope, problem) };
      try {
        await ctx.client.patch(
          builtinTypes.secret,
          { namespace: scope.namespace, name: secretName },
          { data: { value: Buffer.from(result.value, 'utf8').toString('base64') } },
          {
            ...(secret.metadata.resourceVersion === undefined ? {} : { resourceVersion: secret.metadata.resourceVersion }),
            signal: scope.rctx.signal,
          },
        );
      } catch (err: unknown) {
        // An admission policy (the chart's Secret policy: a Secret no bootstrap config owns) or RBAC
        // said no: no retry changes that, a user does; the condition carries the API server's words.
        if (isForbidden(err) && isKubeApiError(err))
          return { stop: refuse(scope, { reason: MachineNetworkReasons.bootstrapSecretRefused, message: err.message }) };
        return { stop: failed(new Error(`inject the network configuration into Secret ${describe(scope, secretName)}`, { cause: err })) };
      }
      ctx.events.event(mn, {
        type: 'Normal',
        reason: MachineNetworkEventReasons.userDataInjected,
        message: `injected network configuration sha256:${result.hash.slice(0, 12)} into Secret ${secretName}`,
      });
      scope.rctx.logger.info('injected network configuration', { secret: secretName, hash: result.hash });
      return { next: result.hash };
    }
  }
}

function recordInjected(scope: MachineNetworkScope, record: UserDataRecord): StepOutcome {
  (scope.machineNetwork.status ??= {}).userData = record;
  markCondition(
    scope.machineNetwork,
    {
      type: MachineNetworkConditionTypes.userDataInjected,
      status: 'True',
      reason: MachineNetworkReasons.injected,
      message: `Secret ${record.secretName ?? ''} carries the network configuration (sha256:${(record.hash ?? '').slice(0, 12)})`,
    },
    scope.now,
  );
  return proceed;
}

/** Secrets are not watched: a Secret fixed in place (or replaced) is read again after this long. */
const SECRET_RECHECK_MS = 30_000;

/** A Secret we will not write: said on the condition and in a Warning Event; a user edit ends the wait. */
function refuse(scope: MachineNetworkScope, problem: { reason: string; message: string }): StepOutcome {
  notInjected(scope, problem.reason, problem.message);
  scope.ctx.events.event(scope.machineNetwork, {
    type: 'Warning',
    reason: MachineNetworkEventReasons.injectionRefused,
    message: problem.message,
  });
  return waitFor(SECRET_RECHECK_MS);
}

/**
 * A machine whose device exists but whose status does not say it was injected: a `clusterctl
 * move` or a restore (status is not carried), or a machine that was provisioned before it was
 * linked. Its user data is never rewritten; the Secret tells whether it carries our part.
 */
function adoptProvisioned(scope: MachineNetworkScope, secret: Secret | undefined, injected: Injected): StepOutcome {
  const mn: MachineNetwork = scope.machineNetwork;
  const hash = secret === undefined ? undefined : readInjectionHash(decode(secret.data?.['value']) ?? '');
  if (hash !== undefined) {
    (mn.status ??= {}).userData = { ...(secret?.metadata.name === undefined ? {} : { secretName: secret.metadata.name }), hash };
    return checkInjected(scope, {
      ports: injected.ports,
      network: injected.network,
      current: injected.announcement,
      message: `the device was created from user data carrying the network configuration (sha256:${hash.slice(0, 12)})`,
    });
  }
  notInjected(
    scope,
    MachineNetworkReasons.provisionedWithoutInjection,
    'the device was created before the network configuration was injected: its OS has no VLAN interfaces; ports are still configured, replace the machine to get both',
  );
  return proceed;
}
