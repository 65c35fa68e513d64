// An intercepting HTTPS proxy in front of the simulator, for programs that always call the real
// API host (CAPP v0.9.0 calls https://api.equinix.com/metal/v1 and cannot be pointed elsewhere).
// Such a program, started with HTTPS_PROXY=<proxy url> and a CA it trusts (SSL_CERT_FILE for Go),
// opens `CONNECT api.equinix.com:443`; the proxy answers 200, terminates TLS itself with a
// certificate for that host signed by the test's CA, and hands the decrypted requests to the
// simulator's own request handler. Nothing leaves the machine: any other target, and any plain
// proxied request, is refused with 403 (and remembered, so a test can say what was tried).

import { createServer as createHttpServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { holdIdleConnections, listenLocal } from './listen.js';

/** The host CAPP (and the equinix-sdk-go default configuration) calls. */
export const EQUINIX_API_HOST = 'api.equinix.com';

export interface InterceptingProxyOptions {
  /** Serving certificate (PEM) for every intercepted host, signed by a CA the client trusts, and its key. */
  readonly cert: string | Buffer;
  readonly key: string | Buffer;
  /** Hosts whose port-443 tunnels are intercepted; default [api.equinix.com]. */
  readonly hosts?: readonly string[];
  /** Port to listen on; 0 (the default) picks a free one. */
  readonly port?: number;
  /** Interface to listen on; default 127.0.0.1. */
  readonly host?: string;
}

export interface RefusedProxyRequest {
  /** `host:port` of a CONNECT, or the absolute URL of a plain proxied request. */
  readonly target: string;
  readonly method: string;
}

export interface InterceptingProxy {
  /** e.g. http://127.0.0.1:41235: the value for HTTPS_PROXY. */
  readonly url: string;
  /** Tunnels opened to intercepted hosts so far. */
  tunnels(): number;
  /** Everything that was refused, oldest first. */
  refused(): readonly RefusedProxyRequest[];
  close(): Promise<void>;
}

function refuse(socket: Duplex, reason: string): void {
  const body = `${reason}\n`;
  socket.end(
    `HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** Splits a CONNECT target (`host:port`, `[v6]:port`). */
function parseAuthority(authority: string): { host: string; port: string } | undefined {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d+)$/.exec(authority);
  if (m === null) return undefined;
  return { host: (m[1] ?? m[2] ?? '').toLowerCase(), port: m[3] ?? '' };
}

/**
 * Starts the proxy; `handler` answers the decrypted requests (the simulator passes its own).
 * Resolves once it listens.
 */
export async function startInterceptingProxy(handler: RequestListener, options: InterceptingProxyOptions): Promise<InterceptingProxy> {
  const hosts = new Set((options.hosts ?? [EQUINIX_API_HOST]).map((h) => h.toLowerCase()));
  const refused: RefusedProxyRequest[] = [];
  const sockets = new Set<Duplex>();
  let tunnels = 0;
  // Terminates TLS on sockets handed over by CONNECT; it never listens itself. Only HTTP/1.1 is
  // offered over ALPN, so Go's client does not try HTTP/2.
  const terminator = createHttpsServer({ cert: options.cert, key: options.key, ALPNProtocols: ['http/1.1'] }, handler);
  holdIdleConnections(terminator);

  const front: Server = createHttpServer((req: IncomingMessage, res: ServerResponse) => {
    refused.push({ target: req.url ?? '', method: req.method ?? '' });
    res.writeHead(403, { 'content-type': 'text/plain' });
    res.end(`this proxy only opens CONNECT tunnels to ${[...hosts].join(', ')} on port 443\n`);
  });
  front.on('connect', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    const target = req.url ?? '';
    const authority = parseAuthority(target);
    if (authority === undefined || !hosts.has(authority.host) || authority.port !== '443') {
      refused.push({ target, method: 'CONNECT' });
      refuse(socket, `this proxy only opens tunnels to ${[...hosts].join(', ')} on port 443, not ${target}`);
      return;
    }
    tunnels += 1;
    socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length > 0) socket.unshift(head);
    terminator.emit('connection', socket as Socket);
  });

  const hostPort = await listenLocal(front, options.port ?? 0, options.host ?? '127.0.0.1');
  return {
    url: `http://${hostPort}`,
    tunnels: () => tunnels,
    refused: () => [...refused],
    close: async () => {
      for (const s of sockets) s.destroy();
      terminator.closeAllConnections();
      await new Promise<void>((resolve) => {
        front.close(() => resolve());
        front.closeAllConnections();
      });
    },
  };
}
