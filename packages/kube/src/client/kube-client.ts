import { KubeApiError, kubeApiErrorFromResponse, toKubeApiError } from '../errors.js';
import { apiVersionOf, keyString, type KubeObject, type ObjectKey, type ResourceType } from '../resource.js';
import type { ClusterAccess } from './kube-config.js';
import { collectionPath, groupPath, objectPath } from './paths.js';
import { Transport, type HttpRequest, type HttpResponse } from './transport.js';
import { streamWatch, type WatchEvent } from './watch-stream.js';

export interface ListOptions {
  /** One namespace; all namespaces when absent (or the kind is cluster-scoped). */
  readonly namespace?: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  /** Page size; list() follows `continue` until the last page. Default 500. */
  readonly limit?: number;
  readonly signal?: AbortSignal;
}

export interface ListItemsOptions<T> extends ListOptions {
  /**
   * Called on each item as its page arrives; the result is kept instead. An informer hands back
   * the object it already caches when the item is unchanged, so a relist of a big collection does
   * not hold a second copy of all of it until the last page is in.
   */
  readonly mapItem?: (item: T) => T;
}

export interface ListResult<T> {
  readonly items: T[];
  /** The collection's resourceVersion: watch from here to see every later change. */
  readonly resourceVersion: string;
}

export interface RequestOptions {
  readonly signal?: AbortSignal;
}

export interface WriteOptions extends RequestOptions {
  /** Recorded in managedFields; defaults to the client's fieldManager. */
  readonly fieldManager?: string;
}

export interface PatchOptions extends WriteOptions {
  /**
   * Sent as metadata.resourceVersion inside the merge patch, which the API server treats as a
   * precondition: the patch fails with Conflict when the object changed since it was read.
   */
  readonly resourceVersion?: string;
}

export interface DeleteOptions extends RequestOptions {
  readonly propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
  readonly gracePeriodSeconds?: number;
  /** Delete only this incarnation / this version of the object (Conflict otherwise). */
  readonly preconditions?: { readonly uid?: string; readonly resourceVersion?: string };
  /** Same as preconditions.uid. */
  readonly uid?: string;
  /** Same as preconditions.resourceVersion. */
  readonly resourceVersion?: string;
}

export interface WatchOptions {
  readonly namespace?: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  /** Start after this version; absent means "the current state as ADDED events first". */
  readonly resourceVersion?: string;
  readonly allowWatchBookmarks?: boolean;
  /** Ask the server to end the watch after this long (it closes cleanly; resume from the last version). */
  readonly timeoutSeconds?: number;
  /** Aborting it ends the watch and closes its connection. */
  readonly signal: AbortSignal;
  /** Called once the server accepted the watch, before any event (a quiet watch is still a live one). */
  readonly onOpen?: () => void;
}

export interface KubeClientOptions {
  /** client-node's KubeConfig, or what loadKubeConfig returns. */
  readonly kubeConfig: ClusterAccess;
  /** Default fieldManager of writes. */
  readonly fieldManager?: string;
  /**
   * How long any request but a watch may take, body included (each page of a list on its own).
   * A request the server holds (a stuck admission webhook, a dead connection) would otherwise hold
   * the reconcile that made it forever. Default 30 s; watches end by their own timeoutSeconds.
   */
  readonly requestTimeoutMs?: number;
}

export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

const mergePatch = 'application/merge-patch+json';
const defaultPageSize = 500;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(type: ResourceType, key: { namespace?: string | undefined; name: string }): string {
  return `${type.kind} ${keyString(key.namespace === undefined ? { name: key.name } : { namespace: key.namespace, name: key.name })}`;
}

function describeNew(type: ResourceType, obj: KubeObject): string {
  const name = obj.metadata.name ?? `${obj.metadata.generateName ?? ''}*`;
  return describe(type, { namespace: obj.metadata.namespace, name });
}

/**
 * Typed access to any kind, built-in or custom, over one pooled connection. Every failure is a
 * KubeApiError whose action names the verb, kind and namespace/name. Objects are plain JSON: the
 * API server's schema for the kind is trusted beyond `metadata`.
 */
export class KubeClient {
  private readonly transport: Transport;
  private readonly fieldManager: string | undefined;
  private readonly requestTimeoutMs: number;
  /** Set on clients made by withSignal. */
  private readonly boundSignal: AbortSignal | undefined = undefined;

  constructor(options: KubeClientOptions) {
    this.transport = new Transport(options.kubeConfig);
    this.fieldManager = options.fieldManager;
    this.requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  }

  static fromKubeConfig(kubeConfig: ClusterAccess, options: { fieldManager?: string; requestTimeoutMs?: number } = {}): KubeClient {
    return new KubeClient({ kubeConfig, ...options });
  }

  /** The object, or undefined when it does not exist. */
  async get<T extends KubeObject = KubeObject>(type: ResourceType, key: ObjectKey, options: RequestOptions = {}): Promise<T | undefined> {
    const action = `get ${describe(type, key)}`;
    const res = await this.call({ method: 'GET', path: objectPath(type, key), signal: options.signal }, action);
    if (res.status === 404) return undefined;
    return this.parseObject<T>(res, action);
  }

  /** Every object matching, page by page (`continue`), with the collection's resourceVersion. */
  async list<T extends KubeObject = KubeObject>(type: ResourceType, options: ListItemsOptions<T> = {}): Promise<ListResult<T>> {
    const action = `list ${type.kind}${options.namespace !== undefined ? ` in ${options.namespace}` : ''}`;
    const items: T[] = [];
    let continueToken: string | undefined;
    let resourceVersion = '';
    do {
      const res = await this.call(
        {
          method: 'GET',
          path: collectionPath(type, options.namespace),
          query: {
            labelSelector: options.labelSelector,
            fieldSelector: options.fieldSelector,
            limit: options.limit ?? defaultPageSize,
            continue: continueToken,
          },
          signal: options.signal,
        },
        action,
      );
      const body = this.parseJson(res, action);
      this.ensureOk(res, body, action);
      const metadata = isRecord(body) && isRecord(body['metadata']) ? body['metadata'] : {};
      const rawItems = isRecord(body) && Array.isArray(body['items']) ? (body['items'] as unknown[]) : [];
      const apiVersion = isRecord(body) && typeof body['apiVersion'] === 'string' ? body['apiVersion'] : apiVersionOf(type);
      for (const item of rawItems) {
        // List items carry no apiVersion/kind on the wire; fill them so objects look the same
        // whether they came from a list, a get or a watch.
        if (!isRecord(item) || !isRecord(item['metadata'])) continue;
        const object = { apiVersion, kind: type.kind, ...item } as unknown as T;
        items.push(options.mapItem === undefined ? object : options.mapItem(object));
      }
      resourceVersion = typeof metadata['resourceVersion'] === 'string' ? metadata['resourceVersion'] : resourceVersion;
      continueToken = typeof metadata['continue'] === 'string' && metadata['continue'] !== '' ? metadata['continue'] : undefined;
    } while (continueToken !== undefined);
    return { items, resourceVersion };
  }

  async create<T extends KubeObject>(type: ResourceType, obj: T, options: WriteOptions = {}): Promise<T> {
    const action = `create ${describeNew(type, obj)}`;
    const body = { apiVersion: apiVersionOf(type), kind: type.kind, ...obj };
    return this.write<T>(
      { method: 'POST', path: collectionPath(type, obj.metadata.namespace), body, signal: options.signal },
      action,
      options,
    );
  }

  /** PUT: fails with Conflict when obj.metadata.resourceVersion is not the current one. */
  async replace<T extends KubeObject>(type: ResourceType, obj: T, options: WriteOptions = {}): Promise<T> {
    const key = this.keyOfObject(type, obj);
    const body = { apiVersion: apiVersionOf(type), kind: type.kind, ...obj };
    return this.write<T>(
      { method: 'PUT', path: objectPath(type, key), body, signal: options.signal },
      `replace ${describe(type, key)}`,
      options,
    );
  }

  /** PUT on the status subresource (only status changes; Conflict when stale). */
  async replaceStatus<T extends KubeObject>(type: ResourceType, obj: T, options: WriteOptions = {}): Promise<T> {
    const key = this.keyOfObject(type, obj);
    const body = { apiVersion: apiVersionOf(type), kind: type.kind, ...obj };
    return this.write<T>(
      { method: 'PUT', path: objectPath(type, key, 'status'), body, signal: options.signal },
      `replace status of ${describe(type, key)}`,
      options,
    );
  }

  /** JSON merge patch (RFC 7386), guarded by `resourceVersion` when given. */
  // eslint-disable-next-line max-params -- the shared interface; the fourth is an options object
  async patch<T extends KubeObject = KubeObject>(
    type: ResourceType,
    key: ObjectKey,
    patch: Record<string, unknown>,
    options: PatchOptions = {},
  ): Promise<T> {
    return this.mergePatch<T>({ type, key }, patch, options);
  }

  /** JSON merge patch of the status subresource, guarded by `resourceVersion` when given. */
  // eslint-disable-next-line max-params -- the shared interface; the fourth is an options object
  async patchStatus<T extends KubeObject = KubeObject>(
    type: ResourceType,
    key: ObjectKey,
    patch: Record<string, unknown>,
    options: PatchOptions = {},
  ): Promise<T> {
    return this.mergePatch<T>({ type, key, subresource: 'status' }, patch, options);
  }

  private mergePatch<T extends KubeObject>(
    at: { readonly type: ResourceType; readonly key: ObjectKey; readonly subresource?: 'status' },
    patch: Record<string, unknown>,
    options: PatchOptions,
  ): Promise<T> {
    const { type, key, subresource } = at;
    return this.write<T>(
      {
        method: 'PATCH',
        path: objectPath(type, key, subresource),
        body: withResourceVersion(patch, options.resourceVersion),
        contentType: mergePatch,
        signal: options.signal,
      },
      `patch ${subresource === undefined ? '' : `${subresource} of `}${describe(type, key)}`,
      options,
    );
  }

  /**
   * Deletes the object. True when this call deleted it (or started its deletion: finalizers may
   * keep it a while); false when it was already gone.
   */
  async delete(type: ResourceType, key: ObjectKey, options: DeleteOptions = {}): Promise<boolean> {
    const action = `delete ${describe(type, key)}`;
    const uid = options.preconditions?.uid ?? options.uid;
    const resourceVersion = options.preconditions?.resourceVersion ?? options.resourceVersion;
    const preconditions = { ...(uid !== undefined ? { uid } : {}), ...(resourceVersion !== undefined ? { resourceVersion } : {}) };
    const body = {
      apiVersion: 'v1',
      kind: 'DeleteOptions',
      ...(options.propagationPolicy !== undefined ? { propagationPolicy: options.propagationPolicy } : {}),
      ...(options.gracePeriodSeconds !== undefined ? { gracePeriodSeconds: options.gracePeriodSeconds } : {}),
      ...(Object.keys(preconditions).length > 0 ? { preconditions } : {}),
    };
    const res = await this.call({ method: 'DELETE', path: objectPath(type, key), body, signal: options.signal }, action);
    if (res.status === 404) return false;
    this.ensureOk(res, this.parseJson(res, action), action);
    return true;
  }

  /** The versions of `group` the server serves, its preferred one first; [] when it serves none. */
  async servedVersions(group: string, options: RequestOptions = {}): Promise<string[]> {
    const action = `discover versions of API group ${group === '' ? 'core' : group}`;
    const res = await this.call({ method: 'GET', path: groupPath(group), signal: options.signal }, action);
    if (res.status === 404) return [];
    const body = this.parseJson(res, action);
    this.ensureOk(res, body, action);
    if (!isRecord(body) || !Array.isArray(body['versions'])) return [];
    const versions = (body['versions'] as unknown[])
      .map((v) => (typeof v === 'string' ? v : isRecord(v) && typeof v['version'] === 'string' ? v['version'] : undefined))
      .filter((v): v is string => v !== undefined);
    const preferred = isRecord(body['preferredVersion']) ? body['preferredVersion']['version'] : undefined;
    return typeof preferred === 'string' && versions.includes(preferred)
      ? [preferred, ...versions.filter((v) => v !== preferred)]
      : versions;
  }

  /**
   * The first of `candidates` (in the caller's order of preference) that the server serves, e.g.
   * preferredVersion('ipam.cluster.x-k8s.io', ['v1beta2', 'v1beta1']).
   */
  async preferredVersion<V extends string>(group: string, candidates: readonly V[], options: RequestOptions = {}): Promise<V | undefined> {
    const served = new Set<string>(await this.servedVersions(group, options));
    return candidates.find((c) => served.has(c));
  }

  /** The resource names (plurals, and subresources as "plural/status") served at group/version. */
  async servedResources(group: string, version: string, options: RequestOptions = {}): Promise<string[]> {
    const action = `discover resources of ${group === '' ? version : `${group}/${version}`}`;
    const path = group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
    const res = await this.call({ method: 'GET', path, signal: options.signal }, action);
    if (res.status === 404) return [];
    const body = this.parseJson(res, action);
    this.ensureOk(res, body, action);
    if (!isRecord(body) || !Array.isArray(body['resources'])) return [];
    return (body['resources'] as unknown[]).flatMap((r) => (isRecord(r) && typeof r['name'] === 'string' ? [r['name']] : []));
  }

  /**
   * Runs one watch request (see WatchOptions). Resolves when the server ends it or the signal
   * aborts; rejects with a KubeApiError when the server refuses it (410 Gone included) or with the
   * network error when the connection breaks. Restarting is the caller's job (the Informer's).
   */
  async watch<T extends KubeObject = KubeObject>(
    type: ResourceType,
    options: WatchOptions,
    onEvent: (event: WatchEvent<T>) => void,
  ): Promise<void> {
    const action = `watch ${type.kind}${options.namespace !== undefined ? ` in ${options.namespace}` : ''}`;
    try {
      await streamWatch<T>({
        transport: this.transport,
        request: {
          method: 'GET',
          path: collectionPath(type, options.namespace),
          query: {
            watch: 'true',
            labelSelector: options.labelSelector,
            fieldSelector: options.fieldSelector,
            resourceVersion: options.resourceVersion,
            allowWatchBookmarks: options.allowWatchBookmarks,
            timeoutSeconds: options.timeoutSeconds,
          },
          signal: this.signalFor(options.signal) ?? options.signal,
        },
        action,
        onEvent,
        onOpen: options.onOpen,
      });
    } catch (err: unknown) {
      throw toKubeApiError(err, action);
    }
  }

  /**
   * The same client (same connection pool and settings) with `signal` on every call it makes, on
   * top of each call's own: a reconcile hands its steps one of these, so shutdown or a lost lease
   * cancels whatever Kubernetes call the reconcile is making, however deep. Closing it closes the
   * shared pool: close only the client you built.
   */
  withSignal(signal: AbortSignal): KubeClient {
    // Inherits every field from this client through the prototype chain and overrides the one.
    const bound = Object.create(this) as KubeClient;
    const inherited = this.boundSignal;
    Object.defineProperty(bound, 'boundSignal', { value: inherited === undefined ? signal : AbortSignal.any([inherited, signal]) });
    return bound;
  }

  /** Closes pooled connections (at shutdown, and in tests). */
  close(): void {
    this.transport.close();
  }

  /** The call's own signal together with the one this client was bound to (withSignal). */
  private signalFor(own: AbortSignal | undefined): AbortSignal | undefined {
    if (this.boundSignal === undefined) return own;
    return own === undefined ? this.boundSignal : AbortSignal.any([own, this.boundSignal]);
  }

  private keyOfObject(type: ResourceType, obj: KubeObject): ObjectKey {
    const name = obj.metadata.name;
    if (name === undefined || name === '') throw new Error(`${type.kind} has no metadata.name`);
    const namespace = obj.metadata.namespace;
    return namespace === undefined ? { name } : { namespace, name };
  }

  private async call(req: HttpRequest, action: string): Promise<HttpResponse> {
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), this.requestTimeoutMs);
    const cancel = this.signalFor(req.signal);
    const signal = cancel === undefined ? deadline.signal : AbortSignal.any([cancel, deadline.signal]);
    try {
      return await this.transport.request({ ...req, signal });
    } catch (err: unknown) {
      if (deadline.signal.aborted && cancel?.aborted !== true) {
        throw new KubeApiError({
          action,
          status: 0,
          reason: 'Timeout',
          detail: `no answer within ${this.requestTimeoutMs} ms`,
          cause: err,
        });
      }
      throw toKubeApiError(err, action);
    } finally {
      clearTimeout(timer);
    }
  }

  private async write<T extends KubeObject>(req: HttpRequest, action: string, options: WriteOptions): Promise<T> {
    const fieldManager = options.fieldManager ?? this.fieldManager;
    const res = await this.call(fieldManager === undefined ? req : { ...req, query: { ...req.query, fieldManager } }, action);
    return this.parseObject<T>(res, action);
  }

  private parseJson(res: HttpResponse, action: string): unknown {
    if (res.text === '') return undefined;
    try {
      return JSON.parse(res.text) as unknown;
    } catch (err: unknown) {
      if (res.status >= 200 && res.status < 300) {
        throw new KubeApiError({ action, status: res.status, reason: 'Unknown', detail: 'the response is not JSON', cause: err });
      }
      return res.text;
    }
  }

  private ensureOk(res: HttpResponse, body: unknown, action: string): void {
    if (res.status >= 200 && res.status < 300) return;
    const retryAfter = res.headers['retry-after'];
    throw kubeApiErrorFromResponse({
      action,
      status: res.status,
      body,
      retryAfter: typeof retryAfter === 'string' ? retryAfter : undefined,
    });
  }

  private parseObject<T extends KubeObject>(res: HttpResponse, action: string): T {
    const body = this.parseJson(res, action);
    this.ensureOk(res, body, action);
    if (!isRecord(body) || !isRecord(body['metadata'])) {
      throw new KubeApiError({ action, status: res.status, reason: 'Unknown', detail: 'the response is not a Kubernetes object' });
    }
    return body as unknown as T;
  }
}

function withResourceVersion(patch: Record<string, unknown>, resourceVersion: string | undefined): Record<string, unknown> {
  if (resourceVersion === undefined) return patch;
  const metadata = isRecord(patch['metadata']) ? patch['metadata'] : {};
  return { ...patch, metadata: { ...metadata, resourceVersion } };
}

export type { WatchEvent };
