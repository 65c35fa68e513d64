import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { KubeClient } from './client/kube-client.js';
import { realClock, sleep, type Clock } from './clock.js';
import { isAlreadyExists, isConflict } from './errors.js';
import { errorFields, type Logger } from './log.js';
import type { RuntimeMetrics } from './metrics.js';
import { builtinTypes, type KubeObject } from './resource.js';

/** coordination.k8s.io/v1 Lease, as this package reads and writes it. */
export interface Lease extends KubeObject {
  spec?: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    /** metav1.MicroTime: RFC 3339 with exactly six fractional digits. */
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
}

export interface LeaderElectorOptions {
  readonly client: KubeClient;
  readonly namespace: string;
  /** The Lease's name; one per controller binary (e.g. "metal-l2-ipam-controller"). */
  readonly name: string;
  /** Unique per process: the pod name plus a random suffix is usual. */
  readonly identity: string;
  /** How long a lease holds without renewal before others may take it. Default 15 s. */
  readonly leaseDurationMs?: number;
  /** How long the leader keeps trying to renew before it gives up leading. Default 10 s. */
  readonly renewDeadlineMs?: number;
  /** Pause between attempts to acquire or renew. Default 2 s. */
  readonly retryPeriodMs?: number;
  /** Give the lease up on graceful shutdown so a standby takes over at once. Default true. */
  readonly releaseOnCancel?: boolean;
  readonly logger: Logger;
  readonly metrics?: RuntimeMetrics;
  readonly clock?: Clock;
}

export interface LeaderCallbacks {
  /**
   * Called once leadership is acquired. `leaderSignal` aborts when leadership ends (lost, or the
   * run signal aborted). On graceful shutdown the lease is released only after the returned
   * promise settles, so leader-only work finishes before a standby starts.
   */
  onStartedLeading(leaderSignal: AbortSignal): void | Promise<void>;
  /** Called when leading ended, after the lease was released if it was. */
  onStoppedLeading(): void;
  /** Called when another identity is seen holding the lease. */
  onNewLeader?(identity: string): void;
}

type Attempt = 'acquired' | 'heldByOther' | 'failed';

/** A unique candidate identity, like client-go's: the host (pod) name plus a UUID. */
export function leaderIdentity(): string {
  // In a pod the hostname is the pod name; POD_NAME (downward API) says so outside one too.
  const name = process.env['POD_NAME'];
  return `${name !== undefined && name !== '' ? name : hostname()}_${randomUUID()}`;
}

/** metav1.MicroTime wants six fractional digits; Date gives three. */
export function formatMicroTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** A failed lease write or read at one attempt; logged, then retried at the next period. */
function describeAttemptError(err: unknown): Record<string, unknown> {
  return { err: errorFields(err) };
}

/**
 * Lease-based leader election with client-go's algorithm: acquire by creating the Lease or by
 * replacing an expired one with its resourceVersion (a 409 means another candidate won); renew
 * every retry period; stop leading when renewals fail for renewDeadline, or at once when another
 * holder shows up. Expiry is judged by when this process last saw the record change (local
 * clock), never by the timestamps in it, so clock skew between nodes does not matter. Every
 * duration here (renew deadline, expiry) is measured on the monotonic clock: a wall clock stepped
 * back would otherwise keep a leader that cannot renew leading past the moment a standby takes
 * over, and one stepped forward would end leadership, or expire another's lease, for nothing.
 * Only the timestamps written into the Lease are wall time.
 */
export class LeaderElector {
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private observedRecord: string | undefined;
  /** Monotonic time the record last changed. */
  private observedAt = 0;
  private observedHolder = '';
  /** The lease as this process last wrote it, while leading (renewals skip the read). */
  private ownLease: Lease | undefined;
  private leading = false;

  constructor(private readonly options: LeaderElectorOptions) {
    this.leaseDurationMs = Math.ceil((options.leaseDurationMs ?? 15_000) / 1000) * 1000;
    this.renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = options.retryPeriodMs ?? 2_000;
    if (this.leaseDurationMs <= this.renewDeadlineMs) throw new Error('leaseDurationMs must be greater than renewDeadlineMs');
    if (this.renewDeadlineMs <= this.retryPeriodMs * 1.2) throw new Error('renewDeadlineMs must be greater than 1.2 × retryPeriodMs');
    this.clock = options.clock ?? realClock;
    this.logger = options.logger.child({ lease: `${options.namespace}/${options.name}`, identity: options.identity });
  }

  isLeader(): boolean {
    return this.leading;
  }

  /**
   * Campaigns until leadership is acquired, leads until it is lost or `signal` aborts, then
   * returns. Does not campaign again after losing: a process that lost its lease should exit
   * (its caches and queues may be behind the new leader's), as controller-runtime's do.
   */
  async run(signal: AbortSignal, callbacks: LeaderCallbacks): Promise<void> {
    if (!(await this.acquire(signal, callbacks))) return;
    const leader = new AbortController();
    this.setLeading(true);
    this.logger.info('became leader');
    const leadingWork = Promise.resolve()
      .then(() => callbacks.onStartedLeading(leader.signal))
      .catch((err: unknown) => this.logger.error('leader work failed', { err: errorFields(err) }));
    const end = await this.renew(signal);
    // Before anything else: leader work must stop writing now, not after its current step.
    leader.abort();
    this.setLeading(false);
    if (end.kind === 'cancelled') {
      await leadingWork;
      if (this.options.releaseOnCancel ?? true) await this.release();
      this.logger.info('stopped leading on shutdown');
    } else {
      this.ownLease = undefined;
      this.logger.error('leadership lost', { reason: end.reason });
    }
    callbacks.onStoppedLeading();
  }

  private setLeading(leading: boolean): void {
    this.leading = leading;
    this.options.metrics?.leaderStatus.set({ name: this.options.name }, leading ? 1 : 0);
  }

  private async acquire(signal: AbortSignal, callbacks: LeaderCallbacks): Promise<boolean> {
    this.logger.info('waiting to acquire the lease');
    while (!signal.aborted) {
      const attempt = await this.attempt(signal);
      if (attempt === 'acquired') return true;
      if (attempt === 'heldByOther' && callbacks.onNewLeader !== undefined && this.observedHolder !== '') {
        callbacks.onNewLeader(this.observedHolder);
      }
      await sleep({ delayMs: this.retryPeriodMs * (1 + 0.2 * Math.random()), signal, clock: this.clock });
    }
    return false;
  }

  /** Renews until the deadline passes without success, another holder appears, or cancellation. */
  private async renew(signal: AbortSignal): Promise<{ kind: 'lost'; reason: string } | { kind: 'cancelled' }> {
    let renewedAt = this.clock.monotonic();
    for (;;) {
      await sleep({ delayMs: this.retryPeriodMs, signal, clock: this.clock });
      if (signal.aborted) return { kind: 'cancelled' };
      // A request that hangs must not keep us leading past the deadline.
      const deadline = new AbortController();
      const cancel = this.clock.schedule(() => deadline.abort(), Math.max(0, renewedAt + this.renewDeadlineMs - this.clock.monotonic()));
      const attempt = await this.attempt(AbortSignal.any([signal, deadline.signal]));
      cancel();
      if (signal.aborted) return { kind: 'cancelled' };
      if (attempt === 'acquired') {
        renewedAt = this.clock.monotonic();
        continue;
      }
      if (attempt === 'heldByOther') return { kind: 'lost', reason: `the lease is held by ${this.observedHolder}` };
      if (this.clock.monotonic() - renewedAt >= this.renewDeadlineMs) {
        return { kind: 'lost', reason: `not renewed within the renew deadline (${this.renewDeadlineMs} ms)` };
      }
    }
  }

  private async attempt(signal: AbortSignal): Promise<Attempt> {
    try {
      return await this.tryAcquireOrRenew(signal);
    } catch (err: unknown) {
      if (!signal.aborted) this.logger.warn('lease read or write failed', describeAttemptError(err));
      return 'failed';
    }
  }

  private specFor(previous: Lease['spec'], now: number): NonNullable<Lease['spec']> {
    const wasHolder = previous?.holderIdentity === this.options.identity;
    const nowText = formatMicroTime(now);
    return {
      holderIdentity: this.options.identity,
      leaseDurationSeconds: this.leaseDurationMs / 1000,
      acquireTime: wasHolder ? (previous?.acquireTime ?? nowText) : nowText,
      renewTime: nowText,
      // As client-go counts them: every change of holder, a released lease (empty holder) taken
      // included; only the Lease's creation starts at 0.
      leaseTransitions: wasHolder || previous === undefined ? (previous?.leaseTransitions ?? 0) : (previous.leaseTransitions ?? 0) + 1,
    };
  }

  private observe(spec: Lease['spec'], seenAt: number): void {
    const record = JSON.stringify(spec ?? {});
    if (record !== this.observedRecord) {
      this.observedRecord = record;
      this.observedAt = seenAt;
    }
    const holder = spec?.holderIdentity ?? '';
    if (holder !== this.observedHolder) {
      this.observedHolder = holder;
      if (holder !== '' && holder !== this.options.identity) this.logger.info('lease held by another candidate', { holder });
    }
  }

  private async tryAcquireOrRenew(signal: AbortSignal): Promise<Attempt> {
    const { client, namespace, name } = this.options;
    const type = builtinTypes.lease;
    const now = this.clock.now();
    const seenAt = this.clock.monotonic();
    // Fast path while leading: write over our own last version, no read.
    if (this.leading && this.ownLease !== undefined) {
      try {
        const renewed = await client.replace<Lease>(type, { ...this.ownLease, spec: this.specFor(this.ownLease.spec, now) }, { signal });
        this.ownLease = renewed;
        this.observe(renewed.spec, seenAt);
        return 'acquired';
      } catch (err: unknown) {
        this.ownLease = undefined;
        if (!isConflict(err)) throw err;
        // Someone wrote the lease: read it and judge below.
      }
    }
    const current = await client.get<Lease>(type, { namespace, name }, { signal });
    if (current === undefined) {
      try {
        this.ownLease = await client.create<Lease>(
          type,
          { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { namespace, name }, spec: this.specFor(undefined, now) },
          { signal },
        );
        this.observe(this.ownLease.spec, seenAt);
        return 'acquired';
      } catch (err: unknown) {
        if (isAlreadyExists(err)) return 'failed';
        throw err;
      }
    }
    this.observe(current.spec, seenAt);
    const holder = current.spec?.holderIdentity ?? '';
    const durationMs = (current.spec?.leaseDurationSeconds ?? this.leaseDurationMs / 1000) * 1000;
    if (holder !== '' && holder !== this.options.identity && this.observedAt + durationMs > seenAt) return 'heldByOther';
    try {
      this.ownLease = await client.replace<Lease>(type, { ...current, spec: this.specFor(current.spec, now) }, { signal });
      this.observe(this.ownLease.spec, seenAt);
      return 'acquired';
    } catch (err: unknown) {
      if (isConflict(err)) return 'failed';
      throw err;
    }
  }

  /** Hands the lease back (empty holder) so a standby need not wait for it to expire. */
  private async release(): Promise<void> {
    const lease = this.ownLease;
    if (lease === undefined) return;
    const now = formatMicroTime(this.clock.now());
    try {
      await this.options.client.replace<Lease>(builtinTypes.lease, {
        ...lease,
        spec: {
          holderIdentity: '',
          leaseDurationSeconds: 1,
          acquireTime: now,
          renewTime: now,
          leaseTransitions: lease.spec?.leaseTransitions ?? 0,
        },
      });
      this.logger.info('released the lease');
    } catch (err: unknown) {
      // Not fatal: the lease simply expires after leaseDuration.
      this.logger.warn('could not release the lease', { err: errorFields(err) });
    } finally {
      this.ownLease = undefined;
    }
  }
}
