// The simulator's own endpoints under /_sim (never under /metal/v1, never needing a token): fault
// rules, the request log, the contract report, and forcing a device's state for demos. Their input
// is checked as strictly as the API's: an unknown key, a wrong type or a value out of range is a
// 400 naming the field, never a silent default.

import type { ContractValidator } from '../contract.js';
import { badRequest, notFound } from '../errors.js';
import { FaultSpecError, parseFaultRules, type FaultInjector } from '../faults.js';
import type { SimResponse } from '../http.js';
import type { DeviceState } from '../models.js';
import type { RequestFilter, RequestLog } from '../request-log.js';
import type { SimulatorStore } from '../store.js';
import { unknownKeysProblem } from '../known-keys.js';

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

const FILTER_STRINGS = ['operationId', 'method', 'deviceId', 'portId', 'projectId', 'userAgent'] as const;
const FILTER_INTEGERS = ['status', 'afterSeq'] as const;
const FILTER_KEYS: readonly string[] = [...FILTER_STRINGS, ...FILTER_INTEGERS, 'excludeFaults'];

/** GET /_sim/requests?...: each parameter once, integers as integers, excludeFaults true or false. */
function requestFilter(q: URLSearchParams): RequestFilter {
  const unknown = unknownKeysProblem(Object.fromEntries(q), FILTER_KEYS, 'request log filter');
  if (unknown !== undefined) throw badRequest(unknown);
  const filter: Record<string, string | number | boolean> = {};
  for (const key of q.keys()) if (q.getAll(key).length > 1) throw badRequest(`request log filter: ${key} is given more than once`);
  for (const key of FILTER_STRINGS) {
    const v = q.get(key);
    if (v !== null) filter[key] = v;
  }
  for (const key of FILTER_INTEGERS) {
    const v = q.get(key);
    if (v === null) continue;
    if (!/^\d+$/.test(v)) throw badRequest(`request log filter: ${key} must be a non-negative integer, not ${JSON.stringify(v)}`);
    filter[key] = Number(v);
  }
  const exclude = q.get('excludeFaults');
  if (exclude !== null) {
    if (exclude !== 'true' && exclude !== 'false') throw badRequest('request log filter: excludeFaults must be true or false');
    if (exclude === 'true') filter['excludeFaults'] = true;
  }
  return filter;
}

/** POST /_sim/devices/{id}/state: `{"state": "<one of DEVICE_STATES>"}` and nothing else. */
function readDeviceState(body: unknown): DeviceState {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('the body must be a JSON object {"state": ...}');
  const unknown = unknownKeysProblem(body, ['state'], 'device state');
  if (unknown !== undefined) throw badRequest(unknown);
  const state = (body as Record<string, unknown>)['state'];
  if (typeof state !== 'string' || !DEVICE_STATES.includes(state as DeviceState)) {
    throw badRequest(`state must be one of ${DEVICE_STATES.join(', ')}`);
  }
  return state as DeviceState;
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
        if (err instanceof FaultSpecError) throw badRequest(err.message);
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
    r.store.setDeviceState(device, readDeviceState(r.body));
    return { status: 200, body: { id: device.id, state: device.state } };
  }
  throw notFound();
}
