import { readFile, stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { Logger } from '../log.js';
import { admissionResponse } from './admission.js';
import type { AdmissionHandler, AdmissionRequest, AdmissionVerdict } from './admission.js';

export interface AdmissionServerOptions {
  readonly port: number;
  readonly host?: string;
  /** Holds tls.crt and tls.key (as cert-manager and the chart write them); reloaded when they change. */
  readonly certDir: string;
  /** URL path → handler, e.g. `/validate-ipam-metal-x-k8s-io-v1alpha1-inclusterippool`. */
  readonly handlers: Readonly<Record<string, AdmissionHandler>>;
  readonly logger: Logger;
  readonly reloadIntervalMs?: number;
}

const MAX_BODY_BYTES = 3 * 1024 * 1024;

/**
 * How long an idle keep-alive connection stays open. The API server's webhook client (Go's
 * http.Transport through client-go) keeps idle connections for 90 s and reuses them; a server that
 * closes first (Node's default is 5 s) races the next request on that connection, which then fails
 * with "broken pipe" or "connection reset", and Go does not retry a POST. The API server refuses
 * the object (failurePolicy Fail) for nothing. Closing after the client does leaves it to the
 * client, which never races itself.
 */
export const ADMISSION_KEEP_ALIVE_MS = 120_000;

/**
 * An HTTPS server answering AdmissionReview v1 requests, one handler per URL path. A handler that
 * throws denies the request with the error message (fail closed: validation only the webhook can
 * check, and mutations whose absence would go unnoticed). Runs on every replica, leader or not.
 */
export class AdmissionServer {
  private server: Server | undefined;
  private certMtimeMs = 0;

  constructor(private readonly options: AdmissionServerOptions) {}

  async start(signal: AbortSignal): Promise<void> {
    const { cert, key } = await this.readCerts();
    const server = createServer({ cert, key, minVersion: 'TLSv1.2' }, (req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        this.options.logger.error('admission request failed', { err: err instanceof Error ? err.message : String(err) });
        if (!res.headersSent) res.writeHead(500).end();
      });
    });
    server.keepAliveTimeout = ADMISSION_KEEP_ALIVE_MS;
    // Kept above the keep-alive wait, so that the header timer never cuts an idle connection first.
    server.headersTimeout = ADMISSION_KEEP_ALIVE_MS + 5_000;
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.options.port, this.options.host ?? '0.0.0.0', () => resolve());
    });
    this.options.logger.info('webhook server listening', { port: this.port() });
    const reload = setInterval(() => {
      this.reloadIfChanged().catch((err: unknown) => {
        this.options.logger.warn('could not reload webhook certificate', { err: err instanceof Error ? err.message : String(err) });
      });
    }, this.options.reloadIntervalMs ?? 60_000);
    reload.unref();
    await new Promise<void>((resolve) => {
      const stop = (): void => {
        clearInterval(reload);
        server.close(() => resolve());
        server.closeAllConnections();
      };
      if (signal.aborted) stop();
      else signal.addEventListener('abort', stop, { once: true });
    });
  }

  /** The port actually bound (useful when started on port 0). */
  port(): number {
    const address = this.server?.address();
    return address !== null && typeof address === 'object' ? address.port : this.options.port;
  }

  private async readCerts(): Promise<{ cert: Buffer; key: Buffer }> {
    const certFile = join(this.options.certDir, 'tls.crt');
    const [cert, key, info] = await Promise.all([readFile(certFile), readFile(join(this.options.certDir, 'tls.key')), stat(certFile)]);
    this.certMtimeMs = info.mtimeMs;
    return { cert, key };
  }

  private async reloadIfChanged(): Promise<void> {
    const info = await stat(join(this.options.certDir, 'tls.crt'));
    if (info.mtimeMs === this.certMtimeMs || this.server === undefined) return;
    const { cert, key } = await this.readCerts();
    this.server.setSecureContext({ cert, key });
    this.options.logger.info('reloaded webhook certificate', {});
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const handler = req.method === 'POST' ? this.options.handlers[(req.url ?? '').split('?')[0] ?? ''] : undefined;
    if (handler === undefined) {
      res.writeHead(404).end();
      return;
    }
    const body = await readBody(req);
    const review = parseReview(body);
    if (review === undefined) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('expected an admission.k8s.io/v1 AdmissionReview');
      return;
    }
    let verdict: AdmissionVerdict;
    try {
      verdict = await handler(review);
    } catch (err: unknown) {
      verdict = { allowed: false, message: `admission failed: ${err instanceof Error ? err.message : String(err)}` };
    }
    const response = admissionResponse(review.uid, verdict);
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response }));
  }
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > MAX_BODY_BYTES) throw new Error('admission request body too large');
    chunks.push(buf);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function parseReview(body: string): AdmissionRequest | undefined {
  try {
    const parsed = JSON.parse(body) as { request?: AdmissionRequest };
    const request = parsed.request;
    if (request === undefined || typeof request.uid !== 'string') return undefined;
    return request;
  } catch {
    return undefined;
  }
}
