// The mutating webhook on PacketMachine CREATE (DESIGN §3.3 step 1): a machine linked to a
// MachineNetworkTemplate is created paused, with our hold marker beside the pause, so CAPP does
// not create the server before its network configuration is in the bootstrap data.

import {
  MachineNetworkTemplateType,
  PacketMachineTemplateType,
  type MachineNetworkTemplate,
  type PacketMachine,
  type PacketMachineTemplate,
} from '@metal-l2/api';
import {
  type AdmissionHandler,
  type AdmissionRequest,
  type AdmissionVerdict,
  type JsonPatchOperation,
  type KubeClient,
  type Logger,
} from '@metal-l2/kube';
import { machineHold } from '../hold.js';
import { resolveTemplateName, templateLinkOf } from '../template-link.js';

/** How long the webhook waits for the API server when it reads a PacketMachineTemplate. */
export const DEFAULT_TEMPLATE_READ_TIMEOUT_MS = 4_000;

export interface PacketMachineWebhookDeps {
  /**
   * Reads PacketMachineTemplates from the API server itself: the controller's cache may not have
   * a template that was created a moment before its first machine.
   */
  readonly client: Pick<KubeClient, 'get'>;
  /** The clock stamped into the hold marker. */
  readonly now: () => Date;
  readonly readTimeoutMs?: number;
  readonly logger?: Logger;
  /**
   * The namespace the controller watches, when it watches one: machines elsewhere pass, since the
   * controller would never release a hold there (the chart's namespaceSelector says the same).
   */
  readonly namespace?: string;
}

/** What the webhook does with one new PacketMachine, and why (for logs and tests). */
export type PauseDecision =
  | { readonly kind: 'pause'; readonly templateName: string; readonly patch: readonly JsonPatchOperation[] }
  | { readonly kind: 'pass'; readonly why: 'provisioned' | 'unlinked' | 'held-already' }
  | { readonly kind: 'paused-by-someone-else'; readonly templateName: string };

/**
 * Pure part of the decision, once the template link is known:
 * - a machine with spec.providerID passes: clusterctl move and restores recreate provisioned
 *   machines, and pausing those would stop CAPP from managing a running server;
 * - an unlinked machine passes;
 * - a machine already paused with our hold marker passes (a move of a machine we were holding:
 *   the hold carries over, and our controller releases it);
 * - a machine paused by someone else stays as it is: we add no hold marker, so we never remove a
 *   pause that is not ours. Our controller still injects the network configuration, but if the
 *   other party un-pauses first, the server may be created without it — the response warns;
 * - otherwise: add `cluster.x-k8s.io/paused: ""` and `network.metal.x-k8s.io/hold: <now>`.
 */
export function decidePause(
  machine: Pick<PacketMachine, 'metadata' | 'spec'>,
  input: { readonly templateName: string | undefined; readonly now: Date },
): PauseDecision {
  if (isProvisioned(machine)) return { kind: 'pass', why: 'provisioned' };
  if (input.templateName === undefined) return { kind: 'pass', why: 'unlinked' };
  const pausedBy = machineHold.pausedBy(machine);
  if (pausedBy === 'us') return { kind: 'pass', why: 'held-already' };
  if (pausedBy === 'someone-else') return { kind: 'paused-by-someone-else', templateName: input.templateName };
  return { kind: 'pause', templateName: input.templateName, patch: machineHold.admissionPatch(machine, input.now) };
}

function isProvisioned(machine: Pick<PacketMachine, 'spec'>): boolean {
  const providerID = machine.spec.providerID;
  return providerID !== undefined && providerID !== '';
}

/**
 * The handler for NetworkWebhookPaths.packetMachine. Registered with failurePolicy: Fail — a
 * silently skipped pause gives a server without its L2 configuration — and so it denies the
 * creation, with a message saying why, when it cannot tell whether the machine is linked (the
 * PacketMachineTemplate read failed or timed out). CAPI retries creating the machine. Dry-run
 * requests are answered the same way: the handler only reads.
 */
export function packetMachineAdmissionHandler(deps: PacketMachineWebhookDeps): AdmissionHandler {
  const timeoutMs = deps.readTimeoutMs ?? DEFAULT_TEMPLATE_READ_TIMEOUT_MS;
  return async (request: AdmissionRequest): Promise<AdmissionVerdict> => {
    if (request.operation !== 'CREATE') return { allowed: true };
    const machine = asPacketMachine(request);
    if (machine === undefined) return { allowed: false, message: 'the request carries no PacketMachine object' };
    const described = `PacketMachine ${machine.metadata.namespace ?? ''}/${machine.metadata.name ?? machine.metadata.generateName ?? ''}`;
    if (deps.namespace !== undefined && machine.metadata.namespace !== deps.namespace) {
      deps.logger?.debug('PacketMachine passes', { machine: described, why: 'out-of-scope' });
      return { allowed: true };
    }

    const signal = AbortSignal.timeout(timeoutMs);
    let templateName: string | undefined;
    if (!isProvisioned(machine)) {
      try {
        templateName = await resolveTemplateName(machine, (namespace, name) =>
          deps.client.get<PacketMachineTemplate>(PacketMachineTemplateType, { namespace, name }, { signal }),
        );
      } catch (err: unknown) {
        const link = templateLinkOf(machine);
        const template = link.kind === 'cloned' ? `${link.packetMachineTemplate.namespace}/${link.packetMachineTemplate.name}` : '?';
        const detail = signal.aborted ? `no answer within ${timeoutMs} ms` : err instanceof Error ? err.message : String(err);
        deps.logger?.warn('could not read PacketMachineTemplate', { template, machine: described, err: detail });
        return {
          allowed: false,
          message:
            `metal-l2 cannot tell whether ${described} uses a MachineNetworkTemplate: reading PacketMachineTemplate ${template} failed (${detail}). ` +
            'The machine is refused rather than created without its network configuration; Cluster API retries. ' +
            'Check that the network controller may get packetmachinetemplates.',
        };
      }
    }

    const decision = decidePause(machine, { templateName, now: deps.now() });
    const fields = { machine: described, dryRun: request.dryRun === true };
    switch (decision.kind) {
      case 'pass':
        deps.logger?.debug('PacketMachine passes', { ...fields, why: decision.why });
        return { allowed: true };
      case 'paused-by-someone-else': {
        deps.logger?.info('PacketMachine already paused by someone else; not holding it', { ...fields, template: decision.templateName });
        const missing = await missingTemplateWarning(deps.client, {
          namespace: machine.metadata.namespace,
          name: decision.templateName,
          signal,
        });
        return {
          allowed: true,
          warnings: [
            `${described} is already paused; metal-l2 will not remove that pause. If it is lifted before the network ` +
              `configuration of MachineNetworkTemplate ${decision.templateName} is injected, the server starts without it.`,
            ...missing,
          ],
        };
      }
      case 'pause': {
        deps.logger?.info('holding PacketMachine for its network configuration', { ...fields, template: decision.templateName });
        const missing = await missingTemplateWarning(deps.client, {
          namespace: machine.metadata.namespace,
          name: decision.templateName,
          signal,
        });
        return { allowed: true, patch: decision.patch, ...(missing.length === 0 ? {} : { warnings: missing }) };
      }
    }
  };
}

/**
 * A warning when the linked MachineNetworkTemplate does not exist (a typo in the annotation holds
 * the machine until someone notices). Best effort: a failed read gives no warning, not a denial.
 */
async function missingTemplateWarning(
  client: Pick<KubeClient, 'get'>,
  at: { readonly namespace: string | undefined; readonly name: string; readonly signal: AbortSignal },
): Promise<string[]> {
  if (at.namespace === undefined) return [];
  try {
    const template = await client.get<MachineNetworkTemplate>(
      MachineNetworkTemplateType,
      { namespace: at.namespace, name: at.name },
      { signal: at.signal },
    );
    return template === undefined
      ? [`MachineNetworkTemplate ${at.namespace}/${at.name} not found: the machine stays paused until it exists`]
      : [];
  } catch {
    return [];
  }
}

function asPacketMachine(request: AdmissionRequest): PacketMachine | undefined {
  const value = request.object;
  if (value === null || typeof value !== 'object') return undefined;
  const obj = value as Partial<PacketMachine>;
  if (obj.metadata === undefined || typeof obj.metadata !== 'object') return undefined;
  // On CREATE the namespace may be only in the request (it comes from the URL).
  const namespace = obj.metadata.namespace ?? request.namespace;
  return { ...obj, metadata: { ...obj.metadata, ...(namespace === undefined ? {} : { namespace }) }, spec: obj.spec ?? {} };
}
