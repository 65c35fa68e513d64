// One guest's view of Metal's metadata host. The controller renders every machine's boot script
// with one fixed metadata URL (GUEST_METADATA_URL); each guest reaches it through QEMU's guestfwd
// on its management NIC, which connects here. The forwarder maps the fixed paths to this guest's
// device on the simulator and rewrites the simulator's absolute URLs in the document
// (user_state_url, ...) to the guest-visible host, so the guest's posts come back through it.
// It also serves the guest's NoCloud seed: the device's user data exactly as the simulator holds it.
import { rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

/** What a guest calls the metadata host (a guestfwd address on QEMU's user network). */
export const GUEST_METADATA_HOST = '10.0.2.100';
export const GUEST_METADATA_BASE = `http://${GUEST_METADATA_HOST}`;
/** The URL to give the network controller (`--metadata-url`) for data-plane guests. */
export const GUEST_METADATA_URL = `${GUEST_METADATA_BASE}/metadata`;
/** The NoCloud seed URL (`ds=nocloud-net;s=...` on the guest's kernel command line). */
export const GUEST_SEED_URL = `${GUEST_METADATA_BASE}/seed/`;

export interface MetadataForwarderOptions {
  /** The unix socket to listen on (guestfwd runs `socat - UNIX-CONNECT:<path>` per connection). */
  readonly socketPath: string;
  /** The simulator's public URL (what its documents call it), e.g. sim.url. */
  readonly simulatorUrl: string;
  readonly deviceId: string;
  readonly hostname: string;
}

export interface ForwardedRequest {
  readonly method: string;
  readonly path: string;
  readonly status: number;
}

export class MetadataForwarder {
  /** Every request the guest made, in order (diagnostics, and proof the guest used this path). */
  readonly requests: ForwardedRequest[] = [];
  private server: Server | undefined;

  constructor(private readonly options: MetadataForwarderOptions) {}

  async start(): Promise<void> {
    await rm(this.options.socketPath, { force: true });
    const server = createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        if (!res.headersSent) res.writeHead(502, { 'Content-Type': 'text/plain' });
        res.end(`metadata forwarder: ${err instanceof Error ? err.message : String(err)}\n`);
      });
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.options.socketPath, () => resolve());
    });
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server !== undefined) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    await rm(this.options.socketPath, { force: true });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const method = req.method ?? 'GET';
    const { deviceId, hostname, simulatorUrl } = this.options;
    const reply = (status: number, body: string, contentType = 'text/plain; charset=utf-8'): void => {
      this.requests.push({ method, path, status });
      res.writeHead(status, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body) });
      res.end(body);
    };
    if (method === 'GET' && path === '/seed/meta-data') return reply(200, `instance-id: ${deviceId}\nlocal-hostname: ${hostname}\n`);
    if (method === 'GET' && path === '/seed/vendor-data') return reply(200, '');
    let upstream: string;
    if (path === '/seed/user-data') upstream = `/metadata/${deviceId}/userdata`;
    else if (path === '/metadata' || path === '/metadata/') upstream = `/metadata/${deviceId}`;
    else if (path.startsWith(`/metadata/${deviceId}/`)) upstream = path;
    else return reply(404, 'not found\n');
    const body = method === 'GET' || method === 'HEAD' ? undefined : await readBody(req);
    const answer = await fetch(`${simulatorUrl}${upstream}`, {
      method,
      ...(body === undefined ? {} : { body, headers: { 'Content-Type': req.headers['content-type'] ?? 'application/json' } }),
    });
    const text = (await answer.text()).split(simulatorUrl).join(GUEST_METADATA_BASE);
    return reply(answer.status, text, answer.headers.get('content-type') ?? 'application/octet-stream');
  }
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
