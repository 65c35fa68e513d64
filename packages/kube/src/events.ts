import { randomBytes } from 'node:crypto';
import type { KubeClient } from './client/kube-client.js';
import { realClock, type Clock } from './clock.js';
import { formatTime } from './conditions.js';
import { isNotFound } from './errors.js';
import { errorFields, type Logger } from './log.js';
import { builtinTypes, type KubeObject } from './resource.js';

export type EventType = 'Normal' | 'Warning';

export interface EventInput {
  readonly type: EventType;
  /** PascalCase, stable: users filter and alert on it. */
  readonly reason: string;
  readonly message: string;
}

export interface EventRecorderOptions {
  readonly client: KubeClient;
  /** source.component / reportingComponent, e.g. "metal-l2-ipam-controller". */
  readonly component: string;
  /** source.host / reportingInstance (the pod name); optional. */
  readonly instance?: string;
  readonly logger: Logger;
  readonly clock?: Clock;
  /** How many distinct (object, type, reason, message) series are remembered for aggregation. */
  readonly maxSeries?: number;
}

/** core/v1 Event, the fields this recorder writes. */
interface CoreEvent extends KubeObject {
  involvedObject: { apiVersion?: string; kind?: string; namespace?: string; name?: string; uid?: string; resourceVersion?: string };
  reason: string;
  message: string;
  type: EventType;
  source: { component: string; host?: string };
  firstTimestamp: string;
  lastTimestamp: string;
  count: number;
  reportingComponent: string;
  reportingInstance: string;
}

interface Series {
  readonly namespace: string;
  readonly name: string;
  count: number;
}

const maxMessageLength = 1024;
const maxNameLength = 253;

/**
 * Records Kubernetes Events about objects. Repeats of the same (object, type, reason, message)
 * update the existing Event's count and lastTimestamp instead of creating another, as
 * `kubectl describe` expects ("x5 over 2m"). Writes happen in the background and are serialized
 * per series; failures are logged, never thrown into the reconcile that reported the event.
 */
export class EventRecorder {
  private readonly series = new Map<string, Series>();
  private readonly chains = new Map<string, Promise<void>>();
  private readonly clock: Clock;

  constructor(private readonly options: EventRecorderOptions) {
    this.clock = options.clock ?? realClock;
  }

  /** Queues the event and returns at once. */
  event(obj: KubeObject, input: EventInput): void {
    const message = input.message.length > maxMessageLength ? `${input.message.slice(0, maxMessageLength - 3)}...` : input.message;
    const seriesKey = JSON.stringify([
      obj.metadata.uid ?? '',
      obj.kind ?? '',
      obj.metadata.namespace ?? '',
      obj.metadata.name ?? '',
      input.type,
      input.reason,
      message,
    ]);
    const previous = this.chains.get(seriesKey) ?? Promise.resolve();
    const next = previous
      .then(() => this.write({ obj, input: { ...input, message }, seriesKey }))
      .catch((err: unknown) => {
        this.options.logger.warn('could not record event', {
          reason: input.reason,
          object: `${obj.kind ?? ''} ${obj.metadata.namespace ?? ''}/${obj.metadata.name ?? ''}`,
          err: errorFields(err),
        });
      })
      .finally(() => {
        if (this.chains.get(seriesKey) === next) this.chains.delete(seriesKey);
      });
    this.chains.set(seriesKey, next);
  }

  /** Resolves when every event queued so far was written (or failed and was logged). */
  async flush(): Promise<void> {
    while (this.chains.size > 0) await Promise.all([...this.chains.values()]);
  }

  private async write(options: { obj: KubeObject; input: EventInput; seriesKey: string }): Promise<void> {
    const { obj, input, seriesKey } = options;
    const { client } = this.options;
    const now = formatTime(new Date(this.clock.now()));
    const known = this.series.get(seriesKey);
    if (known !== undefined) {
      try {
        await client.patch(
          builtinTypes.event,
          { namespace: known.namespace, name: known.name },
          { count: known.count + 1, lastTimestamp: now },
        );
        known.count += 1;
        this.remember(seriesKey, known);
        return;
      } catch (err: unknown) {
        // Events expire (1 h by default); start a new one.
        if (!isNotFound(err)) throw err;
        this.series.delete(seriesKey);
      }
    }
    const namespace = obj.metadata.namespace ?? 'default';
    const objectName = obj.metadata.name ?? 'unknown';
    const suffix = `.${this.clock.now().toString(16)}${randomBytes(3).toString('hex')}`;
    const name = objectName.slice(0, maxNameLength - suffix.length) + suffix;
    const event: CoreEvent = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { namespace, name },
      involvedObject: {
        ...(obj.apiVersion !== undefined ? { apiVersion: obj.apiVersion } : {}),
        ...(obj.kind !== undefined ? { kind: obj.kind } : {}),
        ...(obj.metadata.namespace !== undefined ? { namespace: obj.metadata.namespace } : {}),
        ...(obj.metadata.name !== undefined ? { name: obj.metadata.name } : {}),
        ...(obj.metadata.uid !== undefined ? { uid: obj.metadata.uid } : {}),
        ...(obj.metadata.resourceVersion !== undefined ? { resourceVersion: obj.metadata.resourceVersion } : {}),
      },
      reason: input.reason,
      message: input.message,
      type: input.type,
      source: { component: this.options.component, ...(this.options.instance !== undefined ? { host: this.options.instance } : {}) },
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
      reportingComponent: this.options.component,
      reportingInstance: this.options.instance ?? this.options.component,
    };
    await client.create(builtinTypes.event, event);
    this.remember(seriesKey, { namespace, name, count: 1 });
  }

  /** Keeps the most recently used series, dropping the oldest past maxSeries. */
  private remember(key: string, series: Series): void {
    this.series.delete(key);
    this.series.set(key, series);
    const max = this.options.maxSeries ?? 4096;
    for (const oldest of this.series.keys()) {
      if (this.series.size <= max) break;
      this.series.delete(oldest);
    }
  }
}
