import type { KubeClient } from './client/kube-client.js';
import type { KubeObject, ObjectKey, ResourceType } from './resource.js';
import { keyOf } from './resource.js';

export type MergePatch = Record<string, unknown>;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Structural equality over JSON values (key order does not matter; arrays are ordered). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => jsonEqual(v, b[i]));
  }
  if (!isRecord(a) || !isRecord(b)) return false;
  const aKeys = Object.keys(a).filter((k) => a[k] !== undefined);
  const bKeys = Object.keys(b).filter((k) => b[k] !== undefined);
  return aKeys.length === bKeys.length && aKeys.every((k) => jsonEqual(a[k], b[k]));
}

/**
 * The JSON merge patch (RFC 7386) that turns `before` into `after`, or undefined when they are
 * equal. Removed keys become null; nested objects are diffed key by key; arrays are replaced
 * whole (merge patch has no other way), which is why writes should carry a resourceVersion guard.
 */
export function createMergePatch(before: Record<string, unknown>, after: Record<string, unknown>): MergePatch | undefined {
  const patch: MergePatch = {};
  for (const key of Object.keys(before)) {
    if (before[key] !== undefined && (after[key] === undefined || after[key] === null)) patch[key] = null;
  }
  for (const [key, value] of Object.entries(after)) {
    if (value === undefined || value === null) continue;
    const old = before[key];
    if (isRecord(old) && isRecord(value)) {
      const nested = createMergePatch(old, value);
      if (nested !== undefined) patch[key] = nested;
    } else if (!jsonEqual(old, value)) {
      patch[key] = structuredClone(value);
    }
  }
  return Object.keys(patch).length > 0 ? patch : undefined;
}

/** Metadata the server owns; a patch never sends it (resourceVersion travels as the guard). */
const serverManagedMetadata = [
  'resourceVersion',
  'generation',
  'managedFields',
  'creationTimestamp',
  'deletionTimestamp',
  'uid',
  'selfLink',
];

function withoutStatus(obj: KubeObject): Record<string, unknown> {
  const { status: _status, ...rest } = obj as KubeObject & { status?: unknown };
  const metadata: Record<string, unknown> = { ...rest.metadata };
  for (const key of serverManagedMetadata) delete metadata[key];
  return { ...rest, metadata };
}

function statusOf(obj: KubeObject): unknown {
  return (obj as KubeObject & { status?: unknown }).status;
}

/** The merge patch of everything but status (labels, annotations, finalizers, owners, spec). */
export function objectPatch(before: KubeObject, after: KubeObject): MergePatch | undefined {
  return createMergePatch(withoutStatus(before), withoutStatus(after));
}

/** The merge patch of status alone, shaped `{status: {...}}`. */
export function statusPatch(before: KubeObject, after: KubeObject): MergePatch | undefined {
  return createMergePatch({ status: statusOf(before) }, { status: statusOf(after) });
}

export interface PatchHelperOptions {
  /**
   * Guard each patch with the resourceVersion it was computed against (default true): a write
   * based on a stale read fails with Conflict instead of overwriting someone else's change.
   */
  readonly guard?: boolean;
  readonly signal?: AbortSignal;
  /** Called with the object as the server returned it after each write (metadata/spec, then status). */
  readonly onWrite?: (written: KubeObject) => void;
}

/**
 * Snapshot an object when a reconcile starts, change a copy in memory, then let `patch` send
 * what changed: one merge patch for metadata and spec, one for the status subresource, nothing
 * when nothing changed.
 */
export class PatchHelper<T extends KubeObject> {
  private constructor(
    private readonly type: ResourceType,
    private readonly before: T,
  ) {}

  /** Keeps a deep copy of `obj`; edit `obj` (or a copy) freely afterwards. */
  static snapshot<T extends KubeObject>(type: ResourceType, obj: T): PatchHelper<T> {
    return new PatchHelper(type, structuredClone(obj));
  }

  /** What patch() would send; undefined parts are unchanged. */
  changes(after: T): { object: MergePatch | undefined; status: MergePatch | undefined } {
    return { object: objectPatch(this.before, after), status: statusPatch(this.before, after) };
  }

  /**
   * Sends the changes. Returns the object as the server has it after the last write, or the
   * snapshot when nothing was sent. Throws KubeApiError (Conflict when guarded and stale).
   */
  async patch(client: KubeClient, after: T, options: PatchHelperOptions = {}): Promise<T> {
    const { object, status } = this.changes(after);
    const key: ObjectKey = keyOf(this.before);
    const guard = options.guard ?? true;
    let current: T = this.before;
    if (object !== undefined) {
      current = await client.patch<T>(this.type, key, object, {
        ...(guard && current.metadata.resourceVersion !== undefined ? { resourceVersion: current.metadata.resourceVersion } : {}),
        ...(options.signal !== undefined ? { signal: options.signal } : {}),
      });
      options.onWrite?.(current);
    }
    if (status !== undefined) {
      current = await client.patchStatus<T>(this.type, key, status, {
        ...(guard && current.metadata.resourceVersion !== undefined ? { resourceVersion: current.metadata.resourceVersion } : {}),
        ...(options.signal !== undefined ? { signal: options.signal } : {}),
      });
      options.onWrite?.(current);
    }
    return current;
  }
}

/**
 * Sends `after`'s status as a guarded merge patch against `before` when it differs. Returns the
 * updated object, or undefined when there was nothing to send.
 */
export async function patchStatusIfChanged<T extends KubeObject>(options: {
  client: KubeClient;
  type: ResourceType;
  before: T;
  after: T;
  signal?: AbortSignal;
}): Promise<T | undefined> {
  const patch = statusPatch(options.before, options.after);
  if (patch === undefined) return undefined;
  return options.client.patchStatus<T>(options.type, keyOf(options.before), patch, {
    ...(options.before.metadata.resourceVersion !== undefined ? { resourceVersion: options.before.metadata.resourceVersion } : {}),
    ...(options.signal !== undefined ? { signal: options.signal } : {}),
  });
}
