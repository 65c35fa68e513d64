import { CapiLabels, MachineNetworkReasons, PacketClusterType, type MachineNetwork, type PacketMachine } from '@metal-l2/api';
import { readSecretValue, type ReconcileContext } from '@metal-l2/kube';
import { MetalClients, isMetalGone, type Device, type MetalClient, type VirtualNetwork } from '@metal-l2/metal-api';
import type { NetworkContext } from '../context.js';

/** The key of the credentials Secret that holds the Metal API token (as for VRF-backed pools). */
export const API_TOKEN_KEY = 'apiToken';

export type MachineMetal =
  | {
      readonly kind: 'ok';
      readonly metal: MetalClient;
      /** Which token (its fingerprint, never the token): what the client may see depends on it. */
      readonly credentials: string;
      readonly projectId: string;
      readonly metro: string | undefined;
    }
  | { readonly kind: 'missing'; readonly reason: string; readonly message: string };

/** A machine's Metal access that was found. */
export type MetalAccess = Extract<MachineMetal, { readonly kind: 'ok' }>;

/** A Metal client for a token, without a project: enough to read a device by its id. */
export type MetalToken =
  | { readonly kind: 'ok'; readonly metal: MetalClient; readonly credentials: string }
  | { readonly kind: 'missing'; readonly reason: string; readonly message: string };

/**
 * The Metal client for the token in `credentialsSecret` (a Secret in `namespace`) or, when none is
 * named, the controller-wide default Secret; bound to the reconcile's signal and logger.
 */
export async function metalToken(
  ctx: NetworkContext,
  at: { readonly namespace: string; readonly credentialsSecret: string | undefined; readonly rctx: ReconcileContext },
): Promise<MetalToken> {
  const key = at.credentialsSecret !== undefined ? { namespace: at.namespace, name: at.credentialsSecret } : ctx.defaultCredentials;
  if (key === undefined) {
    return {
      kind: 'missing',
      reason: MachineNetworkReasons.credentialsMissing,
      message:
        'no Metal API credentials: set spec.credentialsSecretRef on the MachineNetworkTemplate or start the controller with --metal-credentials-secret',
    };
  }
  const token = await readSecretValue(ctx.client, key, { dataKey: API_TOKEN_KEY, trim: true, signal: at.rctx.signal });
  if (token.kind === 'missing') return { kind: 'missing', reason: MachineNetworkReasons.credentialsMissing, message: token.message };
  return {
    kind: 'ok',
    credentials: MetalClients.fingerprint(token.value),
    metal: ctx.metal
      .clientFor(token.value)
      .withContext({ signal: at.rctx.signal, logger: at.rctx.logger.child({ component: 'metal-api' }) }),
  };
}

/**
 * The Metal client and project for one machine: the token from the template's
 * credentialsSecretRef (in the machine's namespace) or the controller-wide default Secret, the
 * project from the machine's PacketCluster (the one its Cluster points at, else the one named like
 * the cluster). What is missing is reported for a condition; only a user can fix it. The client
 * is bound to the reconcile, so a call a step forgets to give the signal is still cancelled.
 */
export async function machineMetal(
  ctx: NetworkContext,
  at: {
    readonly machineNetwork: MachineNetwork;
    readonly packetMachine: PacketMachine | undefined;
    readonly clusterName: string | undefined;
    /** The reconcile's: the client it returns is bound to its signal and logs to its logger. */
    readonly rctx: ReconcileContext;
  },
): Promise<MachineMetal> {
  const namespace = at.machineNetwork.metadata.namespace ?? '';
  const token = await metalToken(ctx, { namespace, credentialsSecret: at.machineNetwork.spec.credentialsSecretRef?.name, rctx: at.rctx });
  if (token.kind === 'missing') return token;

  const clusterName = at.clusterName ?? at.packetMachine?.metadata.labels?.[CapiLabels.clusterName];
  if (clusterName === undefined) {
    return {
      kind: 'missing',
      reason: MachineNetworkReasons.packetClusterNotFound,
      message: `the PacketMachine has no ${CapiLabels.clusterName} label, so its PacketCluster (and Metal project) is unknown`,
    };
  }
  const cluster = ctx.caches.clusters?.get({ namespace, name: clusterName });
  const infra = cluster?.spec?.infrastructureRef;
  const packetClusterName = infra !== undefined && infra.kind === PacketClusterType.kind ? infra.name : clusterName;
  const packetCluster = ctx.caches.packetClusters.get({ namespace, name: packetClusterName });
  if (packetCluster === undefined) {
    return {
      kind: 'missing',
      reason: MachineNetworkReasons.packetClusterNotFound,
      message: `PacketCluster ${namespace}/${packetClusterName} not found: it names the Metal project`,
    };
  }
  return {
    kind: 'ok',
    credentials: token.credentials,
    metal: token.metal,
    projectId: packetCluster.spec.projectID,
    metro: at.packetMachine?.spec.metro ?? packetCluster.spec.metro,
  };
}

/** The device as Metal shows it, or undefined when Metal no longer has it (404). */
export async function readDevice(
  metal: MetalClient,
  id: string,
  options: { readonly include?: readonly string[]; readonly signal: AbortSignal },
): Promise<Device | undefined> {
  try {
    return await metal.devices.get(id, { ...(options.include === undefined ? {} : { include: options.include }), signal: options.signal });
  } catch (err: unknown) {
    if (isMetalGone(err)) return undefined;
    throw err;
  }
}

/** The device, unless Metal no longer has it or it is on its way out (its VLAN assignments and addresses go with it). */
export async function readRemainingDevice(
  metal: MetalClient,
  id: string,
  options: { readonly include?: readonly string[]; readonly signal: AbortSignal },
): Promise<Device | undefined> {
  const device = await readDevice(metal, id, options);
  return device === undefined || device.state === 'deprovisioning' || device.state === 'deleted' ? undefined : device;
}

// ---- A project's VLANs, listed once for all its machines ----

interface Entry {
  readonly fetchedAt: number;
  readonly vlans: Promise<readonly VirtualNetwork[]>;
}

/**
 * A project's VLANs in one metro as one token sees them, shared by every machine of that project
 * using that token: a rollout of many machines lists them once, not once per machine. Keyed by
 * the token (its fingerprint) too: two tokens may be granted different projects, so one token's
 * answer (or its refusal) must never be served to a machine using another. An entry is refreshed when it is older than
 * `maxAgeMs`, or sooner when a machine asks for a vxlan it does not hold (a VLAN created since),
 * but never more often than `minRefreshMs`.
 */
export class VlanCache {
  readonly #entries = new Map<string, Entry>();

  constructor(private readonly options: { readonly now: () => number; readonly maxAgeMs?: number; readonly minRefreshMs?: number }) {}

  async list(
    metal: MetalClient,
    at: {
      /** The token's fingerprint (MetalClients.fingerprint), never the token. */
      readonly credentials: string;
      readonly projectId: string;
      readonly metro: string;
      readonly wanted: readonly number[];
      readonly signal?: AbortSignal;
    },
  ): Promise<readonly VirtualNetwork[]> {
    const key = `${metal.baseUrl} ${at.credentials} ${at.projectId} ${at.metro}`;
    const now = this.options.now();
    const entry = this.#entries.get(key);
    if (entry !== undefined) {
      const age = now - entry.fetchedAt;
      const fresh = age < (this.options.maxAgeMs ?? 60_000);
      const vlans = await entry.vlans.catch(() => undefined);
      if (vlans !== undefined && fresh) {
        const missing = at.wanted.some((vxlan) => !vlans.some((v) => v.vxlan === vxlan));
        if (!missing || age < (this.options.minRefreshMs ?? 5_000)) return vlans;
      }
    }
    const vlans = metal.virtualNetworks.list(at.projectId, { metro: at.metro, ...(at.signal === undefined ? {} : { signal: at.signal }) });
    this.#entries.set(key, { fetchedAt: now, vlans });
    try {
      return await vlans;
    } catch (err: unknown) {
      this.#entries.delete(key);
      throw err;
    }
  }
}
