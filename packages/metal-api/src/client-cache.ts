import { createHash } from 'node:crypto';
import { createMetalClient, type MetalClient, type MetalClientOptions } from './client.js';
import type { MetalLogger } from './observer.js';

/** How a controller talks to Metal, apart from the token (which comes from a Secret per pool or per cluster). */
export type MetalSettings = Omit<MetalClientOptions, 'token' | 'logger'>;

/** Enough clients for every distinct token in use; beyond that the oldest goes. */
const MAX_CLIENTS = 64;

/**
 * One Metal client per API token, built on first use. Objects sharing a token (pools, machines of
 * one project) share a client and so its client-side rate limit, which is the point of keeping
 * them: a fresh client per reconcile would start each with a full bucket. Keys are token hashes,
 * so the map holds no token itself (each client does, to send it).
 */
export class MetalClients {
  readonly #settings: MetalSettings;
  readonly #logger: MetalLogger;
  readonly #clients = new Map<string, MetalClient>();

  constructor(options: { readonly settings: MetalSettings; readonly logger: MetalLogger }) {
    this.#settings = options.settings;
    this.#logger = options.logger;
  }

  /** A stable, non-reversible name for a token, to find its client again without the token. */
  static fingerprint(token: string): string {
    return createHash('sha256').update(token).digest('hex').slice(0, 16);
  }

  clientFor(token: string): MetalClient {
    const key = MetalClients.fingerprint(token);
    const known = this.#clients.get(key);
    if (known !== undefined) return known;
    const client = createMetalClient({ ...this.#settings, token, logger: this.#logger });
    this.#clients.set(key, client);
    if (this.#clients.size > MAX_CLIENTS) {
      const oldest = this.#clients.keys().next().value;
      if (oldest !== undefined) this.#clients.delete(oldest);
    }
    return client;
  }

  /** The client of a token seen before, by fingerprint (a pool whose Secret is gone while it is deleted). */
  byFingerprint(fingerprint: string): MetalClient | undefined {
    return this.#clients.get(fingerprint);
  }
}
