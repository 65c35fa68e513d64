// The shapes shared by the server and the route handlers: a parsed request, a handler's answer,
// and the route table entry. Handlers are synchronous functions of the store: the simulator has no
// I/O behind a request, and synchronous handlers make every request atomic with respect to timers.

import type { IncomingHttpHeaders } from 'node:http';
import type { FaultInjector } from './faults.js';
import type { SimulatorStore } from './store.js';
import type { TokenGrant } from './models.js';

/** Where the API lives, as on api.equinix.com. */
export const API_PREFIX = '/metal/v1';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface SimRequest {
  readonly method: HttpMethod;
  /** Path below API_PREFIX, e.g. `/ports/<id>/assign`. */
  readonly path: string;
  readonly query: URLSearchParams;
  readonly headers: IncomingHttpHeaders;
  /** Parsed JSON body; undefined when there was none. */
  readonly body: unknown;
  readonly params: Readonly<Record<string, string>>;
}

export interface SimResponse {
  readonly status: number;
  /** JSON-serialisable body (a string is sent as is when `contentType` is given); undefined for 204. */
  readonly body?: unknown;
  readonly contentType?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

export interface RouteContext {
  readonly store: SimulatorStore;
  readonly route: RouteDef;
  readonly req: SimRequest;
  readonly grant: TokenGrant;
  /** Base for absolute URLs the API hands out (metadata's user_state_url, api_url). */
  readonly publicUrl: string;
  /** The fault rules, for those that act inside a call (a batch that ends failed). */
  readonly faults: FaultInjector;
}

export interface RouteDef {
  readonly method: HttpMethod;
  /** The spec's path template, e.g. `/ports/{id}/vlan-assignments/batches/{batch_id}`. */
  readonly path: string;
  readonly operationId: string;
  /** Whether the spec lists 403 for this operation (another project's objects answer 403, else 404). */
  readonly declares403: boolean;
  readonly handler: (ctx: RouteContext) => SimResponse;
}

/**
 * Operations whose spec entry lists no 403: for them another project's object answers 404, so the
 * simulator never sends a status the contract does not allow.
 */
const WITHOUT_403 = new Set([
  'findProjects',
  'findDeviceMetadataByID',
  'findDeviceUserdataByID',
  'findPortById',
  'assignNativeVlan',
  'deleteNativeVlan',
  'findMetalGatewaysByProject',
  'createMetalGateway',
  'findMetalGatewayById',
  'deleteMetalGateway',
]);

/** A route table entry: `endpoint` is "METHOD /path/{param}" as the spec writes it. */
export function route(operationId: string, endpoint: `${HttpMethod} /${string}`, handler: (ctx: RouteContext) => SimResponse): RouteDef {
  const [method, path] = endpoint.split(' ') as [HttpMethod, string];
  return { method, path, operationId, handler, declares403: !WITHOUT_403.has(operationId) };
}

export function json(status: number, body: unknown): SimResponse {
  return { status, body };
}

export function noContent(): SimResponse {
  return { status: 204 };
}
