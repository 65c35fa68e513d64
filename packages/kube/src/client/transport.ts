import http from 'node:http';
import https from 'node:https';
import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import type { ClusterAccess } from './kube-config.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface HttpRequest {
  readonly method: HttpMethod;
  /** Absolute path on the API server, e.g. /apis/coordination.k8s.io/v1/namespaces/x/leases. */
  readonly path: string;
  readonly query?: Readonly<Record<string, string | number | boolean | undefined>>;
  /** Serialized as JSON. */
  readonly body?: unknown;
  readonly contentType?: string;
  readonly signal?: AbortSignal | undefined;
}

export interface HttpResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
}

/** A reused keep-alive connection turned out closed before the request got an answer. */
class StaleConnectionError extends Error {
  constructor(cause: Error) {
    super('pooled connection was closed by the server', { cause });
  }
}

export interface HttpStream {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** The response body; destroy it (or abort the request's signal) to close the connection. */
  readonly body: IncomingMessage;
}

/**
 * HTTP to the API server on one keep-alive agent per transport. client-node 1.4.0 builds a new
 * agent for every request (and every watch reconnect), which costs a TLS handshake per call and
 * leaks sockets on reconnect (client-node #2893, fixed only in 2.0.0); here connections are
 * pooled, and an aborted watch destroys exactly its own socket. Credentials still come from
 * client-node's KubeConfig for every request, so rotating tokens (in-cluster token files, exec
 * plugins) keep working.
 */
export class Transport {
  private agent: http.Agent | undefined;

  constructor(private readonly kubeConfig: ClusterAccess) {}

  /** Sends a request and reads the whole response, whatever its status. Rejects on network errors. */
  async request(req: HttpRequest): Promise<HttpResponse> {
    const res = await this.send(req);
    const chunks: Buffer[] = [];
    for await (const chunk of res) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
    return { status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') };
  }

  /** Sends a request and hands back the body unread: for watches. */
  async stream(req: HttpRequest): Promise<HttpStream> {
    const res = await this.send(req);
    return { status: res.statusCode ?? 0, headers: res.headers, body: res };
  }

  /** Closes pooled connections. Requests after close open new ones. */
  close(): void {
    this.agent?.destroy();
    this.agent = undefined;
  }

  private async send(req: HttpRequest): Promise<IncomingMessage> {
    try {
      return await this.sendOnce(req);
    } catch (err: unknown) {
      // A pooled connection the server closed while idle fails before anything was sent or
      // answered; Node marks that case, and one retry on a fresh connection is safe.
      if (err instanceof StaleConnectionError) return this.sendOnce(req);
      throw err;
    }
  }

  private async sendOnce(req: HttpRequest): Promise<IncomingMessage> {
    req.signal?.throwIfAborted();
    const cluster = this.kubeConfig.getCurrentCluster();
    if (cluster === null) throw new Error('the kubeconfig has no current cluster');
    const options: https.RequestOptions = {};
    await this.kubeConfig.applyToHTTPSOptions(options);
    const url = new URL(cluster.server.replace(/\/+$/, '') + req.path);
    for (const [key, value] of Object.entries(req.query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    const headers: OutgoingHttpHeaders = { Accept: 'application/json' };
    // client-node fills a plain record (Authorization, Impersonate-User); other shapes carry nothing we need.
    if (options.headers !== undefined && !Array.isArray(options.headers)) Object.assign(headers, options.headers);
    if (typeof options.auth === 'string') headers['Authorization'] = `Basic ${Buffer.from(options.auth).toString('base64')}`;
    let payload: Buffer | undefined;
    if (req.body !== undefined) {
      payload = Buffer.from(JSON.stringify(req.body), 'utf8');
      headers['Content-Type'] = req.contentType ?? 'application/json';
      headers['Content-Length'] = payload.length;
    }
    const isHttps = url.protocol === 'https:';
    const agent = this.agentFor(isHttps, options);
    const requestFn = isHttps ? https.request : http.request;
    return new Promise<IncomingMessage>((resolve, reject) => {
      const request = requestFn(
        url,
        { method: req.method, headers, agent, ...(req.signal !== undefined ? { signal: req.signal } : {}) },
        resolve,
      );
      request.on('error', (err: NodeJS.ErrnoException) => {
        reject(request.reusedSocket && err.code === 'ECONNRESET' ? new StaleConnectionError(err) : err);
      });
      request.end(payload);
    });
  }

  /** The agent is built on first use, from the TLS material of the kubeconfig at that time. */
  private agentFor(isHttps: boolean, options: https.RequestOptions): http.Agent {
    if (this.agent !== undefined) return this.agent;
    const common = { keepAlive: true, keepAliveMsecs: 30_000, maxSockets: 64, maxFreeSockets: 16 };
    this.agent = isHttps
      ? new https.Agent({
          ...common,
          ...(options.ca !== undefined ? { ca: options.ca } : {}),
          ...(options.cert !== undefined ? { cert: options.cert } : {}),
          ...(options.key !== undefined ? { key: options.key } : {}),
          ...(options.rejectUnauthorized !== undefined ? { rejectUnauthorized: options.rejectUnauthorized } : {}),
          ...(options.servername !== undefined ? { servername: options.servername } : {}),
        })
      : new http.Agent(common);
    return this.agent;
  }
}
