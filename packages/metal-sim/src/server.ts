// The HTTP front: one handler that logs the call, checks it against the contract, rolls the fault
// dice, authenticates, dispatches to a route, and checks and sends the answer. Everything stateful
// lives in the store; this file owns sockets and the order of those steps.

import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { performance } from 'node:perf_hooks';
import { SystemClock, type SimClock } from './clock.js';
import { ContractValidator } from './contract.js';
import { notFound, SimError, unauthorized, unprocessable } from './errors.js';
import { FaultInjector, type FaultRuleInput, type TerminalFault } from './faults.js';
import { API_PREFIX, type HttpMethod, type RouteDef, type SimResponse } from './http.js';
import { IdGenerator, randomSeed } from './ids.js';
import { startInterceptingProxy, type InterceptingProxy, type InterceptingProxyOptions } from './intercepting-proxy.js';
import { holdIdleConnections, listenLocal } from './listen.js';
import { SimRateLimiter, type SimRateLimit } from './rate-limit.js';
import { RequestLog } from './request-log.js';
import { Router } from './router.js';
import { ADMIN_PREFIX, handleAdminRequest } from './routes/admin.js';
import { apiRoutes } from './routes/index.js';
import { handleMetadataRequest, METADATA_PREFIX, metadataPaths } from './routes/metadata-service.js';
import { DEFAULT_SEED, type SeedConfig } from './seed.js';
import { SimulatorStore, type SimDelays } from './store.js';

export interface SimulatorOptions {
  /** Port to listen on; 0 (the default) picks a free one. */
  readonly port?: number;
  /** Interface to listen on; default 127.0.0.1. */
  readonly host?: string;
  /** Seed for ids, MACs and fault dice; the same seed and call sequence give the same state. Random when absent. */
  readonly seed?: string | number;
  /** Metros, plans, projects and tokens; DEFAULT_SEED when absent. */
  readonly seedConfig?: SeedConfig;
  /** Time for lifecycles and batches; a ManualClock in tests. Default: the system clock. */
  readonly clock?: SimClock;
  readonly delays?: Partial<SimDelays>;
  /** Fault rules active from the start. */
  readonly faults?: readonly FaultRuleInput[];
  /**
   * A token bucket per API token: beyond it, API calls answer 429 with Retry-After and an
   * `{"errors": [...]}` body. Off when absent (Metal publishes no figures to copy).
   */
  readonly rateLimit?: SimRateLimit;
  /** Serve HTTPS with this certificate and key (PEM). */
  readonly tls?: { readonly cert: string | Buffer; readonly key: string | Buffer };
  /** Check every request and response against the spec: a loaded validator, or the spec's path. */
  readonly contract?: ContractValidator | { readonly specPath: string };
  /** Base URL devices are told to use (metadata's api_url and user_state_url); default: the listening URL. */
  readonly publicUrl?: string;
  /**
   * Also start an intercepting HTTPS proxy (`proxyUrl`) that answers CONNECT tunnels to
   * api.equinix.com:443 with this simulator, for programs that always call the real host (CAPP):
   * run them with HTTPS_PROXY=proxyUrl and the certificate's CA trusted (SSL_CERT_FILE for Go).
   */
  readonly proxy?: InterceptingProxyOptions;
}

export interface Simulator {
  /** e.g. http://127.0.0.1:41234 */
  readonly url: string;
  /** `url` + /metal/v1: the base URL to give a Metal client. */
  readonly baseUrl: string;
  readonly store: SimulatorStore;
  readonly faults: FaultInjector;
  readonly requests: RequestLog;
  readonly contract: ContractValidator | undefined;
  /** The rate limit when started with `rateLimit`: its figures and the requests it refused. */
  readonly rateLimiter: SimRateLimiter | undefined;
  readonly clock: SimClock;
  /** The intercepting proxy's URL (for HTTPS_PROXY) when started with `proxy`. */
  readonly proxyUrl: string | undefined;
  /** The proxy itself (tunnels opened, refused targets) when started with `proxy`. */
  readonly proxy: InterceptingProxy | undefined;
  /** The metadata document a device fetches at first boot. */
  metadataUrl(deviceId: string): string;
  /** Stops listening, drops open connections and cancels pending lifecycle steps. */
  close(): Promise<void>;
}

interface Components {
  readonly store: SimulatorStore;
  readonly faults: FaultInjector;
  readonly requests: RequestLog;
  readonly contract: ContractValidator | undefined;
  readonly rateLimiter: SimRateLimiter | undefined;
  readonly router: Router;
  publicUrl: string;
}

interface Outcome {
  readonly response: SimResponse | 'drop';
  readonly operationId: string | undefined;
  readonly faultRuleId: string | undefined;
  readonly rule: string | undefined;
  readonly ids: { projectId?: string; deviceId?: string; portId?: string };
}

const HTML_PAGES: Record<number, string> = {
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

/** Starts a simulator; resolves once it listens. */
export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const seed = options.seed === undefined ? randomSeed() : String(options.seed);
  const clock = options.clock ?? new SystemClock();
  const store = new SimulatorStore({
    seed: options.seedConfig ?? DEFAULT_SEED,
    ids: new IdGenerator(seed),
    clock,
    ...(options.delays === undefined ? {} : { delays: options.delays }),
  });
  const faults = new FaultInjector(seed);
  for (const f of options.faults ?? []) faults.add(f);
  const contract =
    options.contract === undefined || options.contract instanceof ContractValidator
      ? options.contract
      : await ContractValidator.load(options.contract.specPath);
  const rateLimiter = options.rateLimit === undefined ? undefined : new SimRateLimiter(options.rateLimit, clock);
  const parts: Components = {
    store,
    faults,
    requests: new RequestLog(),
    contract,
    rateLimiter,
    router: new Router(apiRoutes),
    publicUrl: '',
  };

  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    handle(parts, req, res).catch((err: unknown) => {
      // Last resort: an error escaped the pipeline (a bug). Answer 500 so the client sees it.
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: `simulator bug: ${err instanceof Error ? err.message : String(err)}` }));
    });
  };
  const server: Server =
    options.tls === undefined ? createHttpServer(listener) : createHttpsServer({ cert: options.tls.cert, key: options.tls.key }, listener);
  holdIdleConnections(server);
  const hostPort = await listenLocal(server, options.port ?? 0, options.host ?? '127.0.0.1');
  const url = `${options.tls === undefined ? 'http' : 'https'}://${hostPort}`;
  parts.publicUrl = options.publicUrl?.replace(/\/+$/, '') ?? url;
  let proxy: InterceptingProxy | undefined;
  try {
    proxy = options.proxy === undefined ? undefined : await startInterceptingProxy(listener, options.proxy);
  } catch (err: unknown) {
    server.close();
    throw err;
  }

  return {
    url,
    baseUrl: `${url}${API_PREFIX}`,
    store,
    faults,
    requests: parts.requests,
    contract,
    rateLimiter,
    clock,
    proxyUrl: proxy?.url,
    proxy,
    metadataUrl: (deviceId) => metadataPaths(parts.publicUrl, deviceId).metadata,
    close: async () => {
      store.close();
      await proxy?.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

function parseJson(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw unprocessable('the request body is not valid JSON');
  }
}

function errorResponse(err: SimError): SimResponse {
  return { status: err.status, body: err.toBody() };
}

function faultResponse(f: Exclude<TerminalFault, { kind: 'drop' }>): SimResponse {
  const status = f.kind === 'rate-limit' ? 429 : f.status;
  const headers: Record<string, string> = f.kind === 'rate-limit' ? { 'retry-after': String(f.retryAfterSeconds) } : {};
  if (f.html) {
    const title = HTML_PAGES[status] ?? 'Error';
    return {
      status,
      headers,
      contentType: 'text/html',
      body: `<html><head><title>${status} ${title}</title></head><body><h1>${status} ${title}</h1></body></html>`,
    };
  }
  return {
    status,
    headers,
    body: { error: f.kind === 'rate-limit' ? 'Too many requests, slow down' : 'Internal server error (injected)' },
  };
}

/**
 * The rate limit's refusal, when the call's API token has no token left in its bucket. Calls
 * without a token are not counted: they get their 401.
 */
function rateLimited(limiter: SimRateLimiter | undefined, headers: IncomingMessage['headers']): SimResponse | undefined {
  const header = headers['x-auth-token'];
  const token = Array.isArray(header) ? header[0] : header;
  if (limiter === undefined || token === undefined) return undefined;
  const decision = limiter.take(token);
  if (decision.allowed) return undefined;
  const { requestsPerSecond, burst } = limiter.limit;
  return {
    status: 429,
    headers: { 'retry-after': String(decision.retryAfterSeconds) },
    body: {
      errors: [
        `Too many requests: this API token is limited to ${requestsPerSecond} requests per second (burst ${burst}); retry after ${decision.retryAfterSeconds} s`,
      ],
    },
  };
}

function send(res: ServerResponse, r: SimResponse): void {
  const headers: Record<string, string> = { ...r.headers };
  if (r.body === undefined) {
    res.writeHead(r.status, headers);
    res.end();
    return;
  }
  const text = typeof r.body === 'string' && r.contentType !== undefined ? r.body : JSON.stringify(r.body);
  headers['content-type'] = r.contentType ?? 'application/json; charset=utf-8';
  res.writeHead(r.status, headers);
  res.end(text);
}

function sleep(ms: number): Promise<void> {
  // Injected latency is wall-clock time on purpose: it exercises the client's real timeouts.
  return new Promise((resolve) => setTimeout(resolve, ms));
}

const METHODS: readonly HttpMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

async function handle(parts: Components, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const started = performance.now();
  // The log says when a call arrived, as its readers assume (the spacing of a client's calls), not
  // when its answer was ready: that moves with injected latency and with the host's load.
  const arrivedAt = parts.store.nowIso();
  const url = new URL(req.url ?? '/', 'http://simulator.invalid');
  const method = (req.method ?? 'GET').toUpperCase();
  const rawBody = await readBody(req);

  if (url.pathname === ADMIN_PREFIX || url.pathname.startsWith(`${ADMIN_PREFIX}/`)) {
    let response: SimResponse;
    try {
      response = handleAdminRequest({
        store: parts.store,
        faults: parts.faults,
        requests: parts.requests,
        contract: parts.contract,
        method,
        path: url.pathname.slice(ADMIN_PREFIX.length),
        query: url.searchParams,
        body: parseJson(rawBody),
      });
    } catch (err: unknown) {
      if (!(err instanceof SimError)) throw err;
      response = errorResponse(err);
    }
    send(res, response);
    return;
  }

  const outcome = await answer(parts, { method, url, rawBody, headers: req.headers });
  const status = outcome.response === 'drop' ? 0 : outcome.response.status;
  parts.requests.record({
    at: arrivedAt,
    method,
    path: url.pathname,
    operationId: outcome.operationId,
    status,
    projectId: outcome.ids.projectId,
    deviceId: outcome.ids.deviceId,
    portId: outcome.ids.portId,
    faultRuleId: outcome.faultRuleId,
    rule: outcome.rule,
    durationMs: performance.now() - started,
    userAgent: typeof req.headers['user-agent'] === 'string' ? req.headers['user-agent'] : undefined,
  });
  if (outcome.response === 'drop') {
    // A dropped connection: no status line at all, as when a proxy or the network gives up.
    req.socket.destroy();
    return;
  }
  send(res, outcome.response);
}

interface Incoming {
  readonly method: string;
  readonly url: URL;
  readonly rawBody: string;
  readonly headers: IncomingMessage['headers'];
}

/** The whole decision for one API or metadata call. */
async function answer(parts: Components, inc: Incoming): Promise<Outcome> {
  const { method, url } = inc;
  const isApi = url.pathname === API_PREFIX || url.pathname.startsWith(`${API_PREFIX}/`);
  const subPath = isApi ? url.pathname.slice(API_PREFIX.length) || '/' : url.pathname;
  const match = isApi && METHODS.includes(method as HttpMethod) ? parts.router.match(method as HttpMethod, subPath) : undefined;
  const route: RouteDef | undefined = match !== undefined && 'route' in match ? match.route : undefined;
  const params = match !== undefined && 'params' in match ? match.params : {};
  const ids = resourceIds(parts.store, { route, params, metadataPath: isApi ? undefined : subPath });
  const base = { operationId: route?.operationId, ids };

  let body: unknown;
  let bodyError: SimError | undefined;
  try {
    body = parseJson(inc.rawBody);
  } catch (err: unknown) {
    if (!(err instanceof SimError)) throw err;
    bodyError = err;
  }
  if (isApi) {
    parts.contract?.validateRequest({ method, path: url.pathname, rawQuery: url.search.slice(1), headers: inc.headers, body });
  }

  // The limit stands in front of everything else, as a gateway's would.
  const limited = isApi ? rateLimited(parts.rateLimiter, inc.headers) : undefined;
  if (limited !== undefined) {
    checkResponse(parts, { route, method, path: url.pathname, response: limited });
    return { ...base, response: limited, faultRuleId: undefined, rule: 'rate-limit' };
  }

  const decision = parts.faults.decide({ operationId: route?.operationId, method, path: isApi ? subPath : url.pathname });
  if (decision.latencyMs > 0) await sleep(decision.latencyMs);
  if (decision.terminal !== undefined) {
    if (isApi) parts.contract?.skipResponse();
    const response = decision.terminal.kind === 'drop' ? 'drop' : faultResponse(decision.terminal);
    return { ...base, response, faultRuleId: decision.terminal.ruleId, rule: undefined };
  }

  let response: SimResponse;
  let rule: string | undefined;
  try {
    if (bodyError !== undefined) throw bodyError;
    if (isApi) response = dispatch(parts, { route, params, method, subPath, query: url.searchParams, headers: inc.headers, body });
    else if (url.pathname.startsWith(`${METADATA_PREFIX}/`)) {
      response = handleMetadataRequest({
        store: parts.store,
        method,
        path: url.pathname.slice(METADATA_PREFIX.length),
        body,
        publicUrl: parts.publicUrl,
      });
    } else throw notFound();
  } catch (err: unknown) {
    if (!(err instanceof SimError)) throw err;
    response = errorResponse(err);
    rule = err.rule;
  }
  if (isApi) checkResponse(parts, { route, method, path: url.pathname, response });
  // A created device is known only now; the log should still tie the call to it.
  if (route?.operationId === 'createDevice' && response.status === 201) {
    const created = response.body as { id?: unknown };
    if (typeof created.id === 'string') ids.deviceId = created.id;
  }
  return { ...base, response, faultRuleId: undefined, rule };
}

/** Holds an API answer to the spec (or notes a call the simulator has no route for). */
function checkResponse(
  parts: Components,
  r: { readonly route: RouteDef | undefined; readonly method: string; readonly path: string; readonly response: SimResponse },
): void {
  if (r.route === undefined) {
    parts.contract?.noteUnserved(r.method, r.path);
    return;
  }
  parts.contract?.validateResponse({
    operationId: r.route.operationId,
    method: r.method,
    path: r.path,
    status: r.response.status,
    body: r.response.body,
  });
}

function dispatch(
  parts: Components,
  r: {
    readonly route: RouteDef | undefined;
    readonly params: Record<string, string>;
    readonly method: string;
    readonly subPath: string;
    readonly query: URLSearchParams;
    readonly headers: IncomingMessage['headers'];
    readonly body: unknown;
  },
): SimResponse {
  const tokenHeader = r.headers['x-auth-token'];
  const token = Array.isArray(tokenHeader) ? tokenHeader[0] : tokenHeader;
  const grant = token === undefined ? undefined : parts.store.tokens.get(token);
  if (r.route === undefined) throw notFound();
  if (grant === undefined) throw unauthorized();
  return r.route.handler({
    store: parts.store,
    route: r.route,
    grant,
    publicUrl: parts.publicUrl,
    faults: parts.faults,
    req: { method: r.route.method, path: r.subPath, query: r.query, headers: r.headers, body: r.body, params: r.params },
  });
}

/** Ties a call to its project, device and port for the request log (looked up before the call runs). */
function resourceIds(
  store: SimulatorStore,
  r: { readonly route: RouteDef | undefined; readonly params: Record<string, string>; readonly metadataPath: string | undefined },
): { projectId?: string; deviceId?: string; portId?: string } {
  const { route, params, metadataPath } = r;
  if (metadataPath !== undefined) {
    const deviceId = metadataPath
      .slice(METADATA_PREFIX.length)
      .split('/')
      .find((s) => s !== '');
    const device = deviceId === undefined ? undefined : store.devices.get(deviceId);
    return device === undefined ? {} : { deviceId: device.id, projectId: device.projectId };
  }
  if (route === undefined) return {};
  const id = params['id'];
  if (route.path.startsWith('/projects/')) {
    const projectId = params['project_id'] ?? id;
    return projectId === undefined ? {} : { projectId };
  }
  if (route.path.startsWith('/devices/') && id !== undefined) {
    const device = store.devices.get(id);
    return { deviceId: id, ...(device === undefined ? {} : { projectId: device.projectId }) };
  }
  if (route.path.startsWith('/ports/') && id !== undefined) {
    const port = store.ports.get(id);
    const device = port === undefined ? undefined : store.devices.get(port.deviceId);
    return { portId: id, ...(device === undefined ? {} : { deviceId: device.id, projectId: device.projectId }) };
  }
  return {};
}
