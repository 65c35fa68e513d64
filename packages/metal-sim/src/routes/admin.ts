// The simulator's own endpoints under /_sim (never under /metal/v1, never needing a token): fault
// rules, the request log, the contract report, and forcing a device's state for demos.

import type { ContractValidator } from '../contract.js';
import { notFound, unprocessable } from '../errors.js';
import { FaultSpecError, parseFaultRules, type FaultInjector } from '../faults.js';
import type { SimResponse } from '../http.js';
import type { DeviceState } from '../models.js';
import type { RequestFilter, RequestLog } from '../request-log.js';
import type { SimulatorStore } from '../store.js';

export const ADMIN_PREFIX = '/_sim';

export interface AdminRequest {
  readonly store: SimulatorStore;
  readonly faults: FaultInjector;
  readonly requests: RequestLog;
  readonly contract: ContractValidator | undefined;
  readonly method: string;
  /** Path below ADMIN_PREFIX. */
  readonly path: string;
  readonly query: URLSearchParams;
  readonly body: unknown;
}

const DEVICE_STATES: readonly DeviceState[] = ['queued', 'provisioning', 'active', 'failed'];

function requestFilter(q: URLSearchParams): RequestFilter {
  const afterSeq = q.get('afterSeq');
  const status = q.get('status');
  return {
    ...(q.get('operationId') === null ? {} : { operationId: q.get('operationId') ?? '' }),
    ...(q.get('method') === null ? {} : { method: q.get('method') ?? '' }),
    ...(q.get('deviceId') === null ? {} : { deviceId: q.get('deviceId') ?? '' }),
    ...(q.get('portId') === null ? {} : { portId: q.get('portId') ?? '' }),
    ...(q.get('projectId') === null ? {} : { projectId: q.get('projectId') ?? '' }),
    ...(status === null ? {} : { status: Number(status) }),
    ...(afterSeq === null ? {} : { afterSeq: Number(afterSeq) }),
    ...(q.get('excludeFaults') === 'true' ? { excludeFaults: true } : {}),
    ...(q.get('userAgent') === null ? {} : { userAgent: q.get('userAgent') ?? '' }),
  };
}

export function handleAdminRequest(r: AdminRequest): SimResponse {
  const parts = r.path.split('/').filter((s) => s !== '');
  const [head, id, leaf] = parts;
  if (head === 'faults' && id === undefined) {
    if (r.method === 'GET') return { status: 200, body: { faults: r.faults.list() } };
    if (r.method === 'DELETE') {
      r.faults.clear();
      return { status: 204 };
    }
    if (r.method === 'POST') {
      try {
        const added = parseFaultRules(r.body).map((rule) => r.faults.add(rule));
        return { status: 201, body: { faults: added } };
      } catch (err: unknown) {
        if (err instanceof FaultSpecError) throw unprocessable(err.message);
        throw err;
      }
    }
  }
  if (head === 'faults' && id !== undefined && r.method === 'DELETE') {
    if (!r.faults.remove(id)) throw notFound(`no fault rule ${id}`);
    return { status: 204 };
  }
  if (head === 'requests' && id === undefined) {
    if (r.method === 'GET') {
      const entries = r.requests.entries(requestFilter(r.query));
      return { status: 200, body: { count: entries.length, requests: entries } };
    }
    if (r.method === 'DELETE') {
      r.requests.clear();
      return { status: 204 };
    }
  }
  if (head === 'contract' && r.method === 'GET') {
    if (r.contract === undefined) throw notFound('contract validation is off (start with --validate-contract)');
    return { status: 200, body: r.contract.report() };
  }
  if (head === 'devices' && id !== undefined && leaf === 'state' && r.method === 'POST') {
    const device = r.store.devices.get(id);
    if (device === undefined) throw notFound(`no device ${id}`);
    const state = typeof r.body === 'object' && r.body !== null ? (r.body as Record<string, unknown>)['state'] : undefined;
    if (typeof state !== 'string' || !DEVICE_STATES.includes(state as DeviceState)) {
      throw unprocessable(`state must be one of ${DEVICE_STATES.join(', ')}`);
    }
    r.store.setDeviceState(device, state as DeviceState);
    return { status: 200, body: { id: device.id, state: device.state } };
  }
  throw notFound();
}
