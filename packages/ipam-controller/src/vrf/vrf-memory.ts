import type { IPPool, PoolVrfStatus, VrfResourceKind } from '@metal-l2/api';

/** Which version of a pool a remembered answer is about. */
interface PoolVersion {
  readonly uid: string;
  readonly generation: number | undefined;
}

/** What the last full pass over a pool's Metal side found. */
interface Verified extends PoolVersion {
  readonly status: PoolVrfStatus;
  readonly atMs: number;
}

/** Why the last pass failed, and until when that answer stands. */
interface Held extends PoolVersion {
  readonly reason: string;
  readonly message: string;
  readonly untilMs: number;
}

interface Entry {
  verified?: Verified | undefined;
  held?: Held | undefined;
  /** Failed passes in a row: drives the retry delay. */
  failures: number;
  /** Fingerprint of the last token that worked, to delete with after the Secret is gone. */
  tokenFingerprint?: string | undefined;
  /** Until when a create of each kind must not be repeated: its last attempt may still land. */
  settling: Map<VrfResourceKind, number>;
}

function isSameVersion(remembered: PoolVersion, pool: IPPool): boolean {
  return remembered.uid === (pool.metadata.uid ?? '') && remembered.generation === pool.metadata.generation;
}

/**
 * Per-pool memory of the VRF reconciler, in this process only (a restart verifies every pool
 * once, which is cheap). It exists because the pool reconciler runs on every claim event: without
 * it a burst of 1,000 claims would become thousands of Metal calls and Secret reads. A verified
 * pool is trusted, and a failed one left alone until its retry time, unless its spec changes
 * (generation) or it is replaced (uid); a verified one also until the resync period has passed.
 */
export class VrfMemory {
  readonly #entries = new Map<string, Entry>();

  #entry(key: string): Entry {
    let entry = this.#entries.get(key);
    if (entry === undefined) {
      entry = { failures: 0, settling: new Map() };
      this.#entries.set(key, entry);
    }
    return entry;
  }

  /** The verified status when it still holds for this pool at `nowMs`, else undefined. */
  fresh(key: string, pool: IPPool, options: { readonly nowMs: number; readonly resyncMs: number }): Verified | undefined {
    const verified = this.#entries.get(key)?.verified;
    // status.vrf is not compared: the cached pool often lags behind the writes that recorded it.
    // Only this controller writes status.vrf; a restored or moved pool has a new uid.
    if (verified === undefined || !isSameVersion(verified, pool) || options.nowMs - verified.atMs >= options.resyncMs) return undefined;
    return verified;
  }

  /** The last failure while its retry time has not come, for this version of the pool. */
  held(key: string, pool: IPPool, nowMs: number): Held | undefined {
    const held = this.#entries.get(key)?.held;
    if (held === undefined || !isSameVersion(held, pool) || nowMs >= held.untilMs) return undefined;
    return held;
  }

  succeeded(key: string, verified: Verified & { readonly tokenFingerprint: string }): void {
    const entry = this.#entry(key);
    entry.verified = { uid: verified.uid, generation: verified.generation, status: verified.status, atMs: verified.atMs };
    entry.held = undefined;
    entry.failures = 0;
    entry.tokenFingerprint = verified.tokenFingerprint;
  }

  /** Records a failed pass; returns how many failed in a row, this one included. */
  failed(key: string, tokenFingerprint?: string): number {
    const entry = this.#entry(key);
    entry.verified = undefined;
    entry.failures += 1;
    if (tokenFingerprint !== undefined) entry.tokenFingerprint = tokenFingerprint;
    return entry.failures;
  }

  /** Keeps a failed pass's answer until its retry time, so that claim events do not repeat it. */
  hold(key: string, held: Held): void {
    this.#entry(key).held = held;
  }

  /**
   * A create failed in a way that leaves open whether Metal acted (a timeout, a 5xx): the object
   * may appear in a moment, so another create must wait until `untilMs` and look again first.
   */
  settle(key: string, kind: VrfResourceKind, untilMs: number): void {
    this.#entry(key).settling.set(kind, untilMs);
  }

  /** How long a create of `kind` must still wait, or undefined when it may go. */
  settlingMs(key: string, kind: VrfResourceKind, nowMs: number): number | undefined {
    const until = this.#entries.get(key)?.settling.get(kind);
    return until === undefined || until <= nowMs ? undefined : until - nowMs;
  }

  tokenFingerprint(key: string): string | undefined {
    return this.#entries.get(key)?.tokenFingerprint;
  }

  /** The pool is gone: nothing about it is needed any more. */
  forget(key: string): void {
    this.#entries.delete(key);
  }
}
