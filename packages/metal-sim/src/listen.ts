// Starting to listen, for the simulator and its intercepting proxy alike: resolve once the socket
// is bound (reject if binding fails) and say which address a client on this machine should dial.

import type { Server as HttpServer } from 'node:http';
import type { Server } from 'node:net';

/**
 * How long an idle keep-alive connection stays open. Node's default (5 s) is far below what HTTP
 * front ends in production keep (60 s and more; Equinix published no figure), and it made a race that
 * real Metal does not have: under load a client reused a connection as the simulator closed it, and a
 * POST failed with ECONNRESET, which CAPP treats as a fatal createDevice error.
 */
export const IDLE_KEEP_ALIVE_MS = 65_000;

export function holdIdleConnections(server: HttpServer): void {
  server.keepAliveTimeout = IDLE_KEEP_ALIVE_MS;
  // Node wants the header timeout above the keep-alive timeout, or it cuts a slow next request.
  server.headersTimeout = IDLE_KEEP_ALIVE_MS + 1_000;
}

/** Binds `server` and returns the `host:port` a local client reaches it at (a wildcard bind means loopback). */
export async function listenLocal(server: Server, port: number, host: string): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('internal: a TCP server has an address and port');
  if (address.family === 'IPv6') return `[${address.address === '::' ? '::1' : address.address}]:${address.port}`;
  return `${address.address === '0.0.0.0' ? '127.0.0.1' : address.address}:${address.port}`;
}
