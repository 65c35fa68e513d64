// The hold: an object we pause until we are done with it, and only ever un-pause when the pause is
// ours. A PacketMachine is held (Cluster API's paused annotation) until its network configuration
// is in its bootstrap data; a Cluster is held (spec.paused) until its control-plane endpoint is
// written. Our marker beside the pause says the pause is ours and since when; a pause without it
// is someone else's and stays. The webhooks take the hold, the controllers explain and end it.

import {
  CapiAnnotations,
  ClusterEndpointAnnotations,
  ClusterEndpointEventReasons,
  NetworkAnnotations,
  type Cluster,
  type KubeObject,
  type PacketMachine,
} from '@metal-l2/api';
import {
  escapeJsonPointer,
  formatTime,
  keyOf,
  type JsonPatchOperation,
  type KubeClient,
  type ReconcileContext,
  type ResourceType,
} from '@metal-l2/kube';
import type { EventSink } from './context.js';

/** Who paused an object: we (our marker beside the pause), someone else, or nobody. */
export type PausedBy = 'us' | 'someone-else' | 'nobody';

/** Where a kind keeps its pause: Cluster API's annotation (machines) or spec.paused (Clusters). */
type PauseField = { readonly in: 'annotation'; readonly key: string } | { readonly in: 'spec' };

/** What a controller needs to write a hold's annotations: the client, the object's type and the reconcile. */
export interface HoldWrite {
  readonly client: Pick<KubeClient, 'patch'>;
  readonly type: ResourceType;
  readonly rctx: Pick<ReconcileContext, 'signal'>;
}

type Pausable = KubeObject & { spec?: { paused?: boolean } | object };

/** The hold of one kind: where its pause, our marker and our reason live. */
export class Hold<T extends Pausable> {
  constructor(
    private readonly where: {
      readonly pause: PauseField;
      /** Our marker: the pause is ours, since this time. */
      readonly marker: string;
      /** Why we still hold it (`<Reason>: <message>`), for `kubectl describe`. */
      readonly reason: string;
    },
  ) {}

  pausedBy(obj: Pick<T, 'metadata' | 'spec'>): PausedBy {
    if (!this.isPaused(obj)) return 'nobody';
    return obj.metadata.annotations?.[this.where.marker] === undefined ? 'someone-else' : 'us';
  }

  /** Our hold: the pause carries our marker. Only such a pause is ever ended by us. */
  isHeldByUs(obj: Pick<T, 'metadata' | 'spec'>): boolean {
    return this.pausedBy(obj) === 'us';
  }

  private isPaused(obj: Pick<T, 'metadata' | 'spec'>): boolean {
    const pause = this.where.pause;
    if (pause.in === 'annotation') return obj.metadata.annotations?.[pause.key] !== undefined;
    const spec: { paused?: unknown } | undefined = obj.spec;
    return spec?.paused === true;
  }

  hasMarker(obj: Pick<T, 'metadata'>): boolean {
    return obj.metadata.annotations?.[this.where.marker] !== undefined;
  }

  /** When we took the hold (ms since the epoch), NaN when the marker is missing or unreadable. */
  heldSince(obj: Pick<T, 'metadata'>): number {
    return Date.parse(obj.metadata.annotations?.[this.where.marker] ?? '');
  }

  reasonOf(obj: Pick<T, 'metadata'>): string | undefined {
    return obj.metadata.annotations?.[this.where.reason];
  }

  /** The admission patch that takes the hold: the pause and our marker stamped `now`. */
  admissionPatch(obj: Pick<T, 'metadata' | 'spec'>, now: Date): JsonPatchOperation[] {
    const add: Record<string, string> = { [this.where.marker]: formatHoldTime(now) };
    const ops: JsonPatchOperation[] = [];
    if (this.where.pause.in === 'spec') {
      ops.push(
        obj.spec === undefined ? { op: 'add', path: '/spec', value: { paused: true } } : { op: 'add', path: '/spec/paused', value: true },
      );
    }
    const annotations = this.where.pause.in === 'annotation' ? { [this.where.pause.key]: '', ...add } : add;
    if (obj.metadata.annotations === undefined) ops.push({ op: 'add', path: '/metadata/annotations', value: annotations });
    else
      for (const [key, value] of Object.entries(annotations))
        ops.push({ op: 'add', path: `/metadata/annotations/${escapeJsonPointer(key)}`, value });
    return ops;
  }

  /**
   * Takes the hold from a controller (the webhook did not): the pause and our marker stamped `now`,
   * guarded by the resourceVersion read, so a change made meanwhile (a device recorded) wins.
   */
  async take(at: HoldWrite, obj: T, now: Date): Promise<void> {
    const annotations: Record<string, string> = { [this.where.marker]: formatHoldTime(now) };
    const pause = this.where.pause;
    if (pause.in === 'annotation') annotations[pause.key] = '';
    const resourceVersion = obj.metadata.resourceVersion;
    await at.client.patch(
      at.type,
      keyOf(obj),
      { metadata: { annotations }, ...(pause.in === 'spec' ? { spec: { paused: true } } : {}) },
      { ...(resourceVersion === undefined ? {} : { resourceVersion }), signal: at.rctx.signal },
    );
  }

  /**
   * Ends our hold: the pause goes with our marker and reason, guarded by the resourceVersion read,
   * so a pause someone set since is never lifted by a stale write. A marker or reason left without
   * a pause (someone unpaused by hand) is cleaned up too. Returns whether a pause of ours was lifted;
   * writes nothing when nothing of ours is there.
   */
  async release(at: HoldWrite, obj: T): Promise<boolean> {
    const annotations = obj.metadata.annotations ?? {};
    if (annotations[this.where.marker] === undefined && annotations[this.where.reason] === undefined) return false;
    const held = this.isHeldByUs(obj);
    const pause = this.where.pause;
    const ours: Record<string, null> = { [this.where.marker]: null, [this.where.reason]: null };
    if (held && pause.in === 'annotation') ours[pause.key] = null;
    const resourceVersion = obj.metadata.resourceVersion;
    await at.client.patch(
      at.type,
      keyOf(obj),
      { metadata: { annotations: ours }, ...(held && pause.in === 'spec' ? { spec: { paused: null } } : {}) },
      { ...(resourceVersion === undefined ? {} : { resourceVersion }), signal: at.rctx.signal },
    );
    return held;
  }

  /** Writes why we hold it (null: clears it); nothing when the annotation says so already. Returns whether it wrote. */
  async writeReason(at: HoldWrite, obj: T, value: string | null): Promise<boolean> {
    if ((this.reasonOf(obj) ?? null) === value) return false;
    await at.client.patch(at.type, keyOf(obj), { metadata: { annotations: { [this.where.reason]: value } } }, { signal: at.rctx.signal });
    return true;
  }
}

/** A PacketMachine's hold: Cluster API's paused annotation and network.metal.x-k8s.io/hold. */
export const machineHold = new Hold<PacketMachine>({
  pause: { in: 'annotation', key: CapiAnnotations.paused },
  marker: NetworkAnnotations.hold,
  reason: NetworkAnnotations.holdReason,
});

/** A Cluster's hold: spec.paused and network.metal.x-k8s.io/endpoint-hold. */
export const clusterHold = new Hold<Cluster>({
  pause: { in: 'spec' },
  marker: ClusterEndpointAnnotations.hold,
  reason: ClusterEndpointAnnotations.holdReason,
});

/** `<Reason>: <message>`, the value of the hold-reason annotations. */
export function holdReasonValue(reason: string, message: string): string {
  return `${reason}: ${message}`;
}

/** A reconcile of a Cluster's endpoint, as far as its hold is concerned. */
interface ClusterAt {
  readonly ctx: {
    readonly client: Pick<KubeClient, 'patch'>;
    readonly types: { readonly cluster: ResourceType };
    readonly events: EventSink;
  };
  readonly rctx: Pick<ReconcileContext, 'signal' | 'logger'>;
  readonly cluster: Cluster;
}

/**
 * Says why a Cluster waits, where `kubectl describe cluster` shows it: the hold-reason annotation and
 * a Warning Event of the same reason, each written once per new reason or message.
 */
export async function noteClusterHoldReason(at: ClusterAt, reason: string, message: string): Promise<void> {
  const write = { client: at.ctx.client, type: at.ctx.types.cluster, rctx: at.rctx };
  if (!(await clusterHold.writeReason(write, at.cluster, holdReasonValue(reason, message)))) return;
  at.ctx.events.event(at.cluster, { type: 'Warning', reason, message });
}

/** Ends our hold on a Cluster (see Hold.release) and, when a pause of ours went, says so with `why`. */
export async function endClusterHold(at: ClusterAt, why: string): Promise<void> {
  const released = await clusterHold.release({ client: at.ctx.client, type: at.ctx.types.cluster, rctx: at.rctx }, at.cluster);
  if (!released) return;
  at.ctx.events.event(at.cluster, { type: 'Normal', reason: ClusterEndpointEventReasons.pauseReleased, message: why });
  at.rctx.logger.info('released the Cluster', { why });
}

/**
 * Paused by someone else with its endpoint already there: clusterctl move (it pauses every
 * Cluster, then copies it with its ClusterEndpoint and claim), or a user. Cluster API's contract
 * is that nothing acts on a paused Cluster; for us an action then could only race the copy (a
 * second ClusterEndpoint or claim on the target, a claim dropped on the source). A paused Cluster
 * without an endpoint is still served: we write ours while the pause keeps CAPP's out.
 */
export function isPausedWithEndpoint(cluster: Cluster): boolean {
  const host = cluster.spec?.controlPlaneEndpoint?.host ?? '';
  return clusterHold.pausedBy(cluster) === 'someone-else' && host !== '';
}

/** RFC 3339 in UTC, to the second, as Kubernetes writes times. */
export function formatHoldTime(now: Date): string {
  return now.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * The Cluster API ≤ 1.8 Machine controller skipped the PacketMachine while it was paused and is not
 * woken by the unpause (it watches infrastructure machines by owner): touching the Machine wakes it.
 * `annotations` go with the wake-up stamp.
 */
export async function wakeMachine(
  at: { readonly client: Pick<KubeClient, 'patch'>; readonly type: ResourceType; readonly rctx: Pick<ReconcileContext, 'signal'> },
  machine: { readonly namespace: string; readonly name: string; readonly now: Date; readonly annotations?: Record<string, string> },
): Promise<void> {
  try {
    await at.client.patch(
      at.type,
      { namespace: machine.namespace, name: machine.name },
      { metadata: { annotations: { ...machine.annotations, [NetworkAnnotations.wokenAt]: formatTime(machine.now) } } },
      { signal: at.rctx.signal },
    );
  } catch (err: unknown) {
    throw new Error(`annotate Machine ${machine.namespace}/${machine.name} to wake Cluster API`, { cause: err });
  }
}
