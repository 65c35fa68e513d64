// Every call the simulator answered, so tests can hold a controller to its call budget ("at most 4
// Metal calls per machine, none in steady state") and see what a fault did.

export interface RequestLogEntry {
  /** 1, 2, 3... in arrival order. */
  readonly seq: number;
  /** Simulated time the call arrived (the store's clock). */
  readonly at: string;
  readonly method: string;
  /** The full path, e.g. `/metal/v1/ports/<id>/assign`. */
  readonly path: string;
  /** The spec operation; undefined for admin, metadata and unknown paths. */
  readonly operationId: string | undefined;
  /** The answer's status; 0 when the connection was dropped. */
  readonly status: number;
  readonly projectId: string | undefined;
  /** The device the call concerned (directly, or through its port); set for created devices too. */
  readonly deviceId: string | undefined;
  readonly portId: string | undefined;
  /** The fault rule that answered instead of the API, if one did. */
  readonly faultRuleId: string | undefined;
  /** The rule that refused the call with a 422, if one did. */
  readonly rule: string | undefined;
  /** Real time spent answering, injected latency included. */
  readonly durationMs: number;
  /** The caller's User-Agent (tells a controller's calls from CAPP's in one log). */
  readonly userAgent: string | undefined;
}

export interface RequestFilter {
  readonly operationId?: string;
  readonly method?: string;
  readonly deviceId?: string;
  readonly portId?: string;
  readonly projectId?: string;
  readonly status?: number;
  /** Only entries with seq greater than this (a mark taken earlier with `lastSeq()`). */
  readonly afterSeq?: number;
  /** Leave out calls a fault answered. */
  readonly excludeFaults?: boolean;
  /** Only calls whose User-Agent starts with this. */
  readonly userAgent?: string;
}

function matches(e: RequestLogEntry, f: RequestFilter): boolean {
  return (
    (f.operationId === undefined || e.operationId === f.operationId) &&
    (f.method === undefined || e.method === f.method.toUpperCase()) &&
    (f.deviceId === undefined || e.deviceId === f.deviceId) &&
    (f.portId === undefined || e.portId === f.portId) &&
    (f.projectId === undefined || e.projectId === f.projectId) &&
    (f.status === undefined || e.status === f.status) &&
    (f.afterSeq === undefined || e.seq > f.afterSeq) &&
    (f.excludeFaults !== true || e.faultRuleId === undefined) &&
    (f.userAgent === undefined || (e.userAgent ?? '').startsWith(f.userAgent))
  );
}

export class RequestLog {
  private log: RequestLogEntry[] = [];
  private seq = 0;

  /** Called by the server once per answered (or dropped) call. */
  record(entry: Omit<RequestLogEntry, 'seq'>): RequestLogEntry {
    const full = { ...entry, seq: ++this.seq };
    this.log.push(full);
    return full;
  }

  entries(filter: RequestFilter = {}): RequestLogEntry[] {
    return this.log.filter((e) => matches(e, filter));
  }

  count(filter: RequestFilter = {}): number {
    return this.entries(filter).length;
  }

  /** Calls per operationId (API calls only). */
  countByOperation(filter: RequestFilter = {}): Record<string, number> {
    const out: Record<string, number> = {};
    for (const e of this.entries(filter)) if (e.operationId !== undefined) out[e.operationId] = (out[e.operationId] ?? 0) + 1;
    return out;
  }

  /** The seq of the last entry, to count only what happens after this point. */
  lastSeq(): number {
    return this.seq;
  }

  clear(): void {
    this.log = [];
  }
}
