import type { MetalClient, VirtualNetwork } from '@metal-l2/metal-api';

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
