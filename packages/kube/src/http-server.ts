import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A listening HTTP server and how to stop it. */
export interface ServerHandle {
  /** host:port actually bound (port 0 resolves to the chosen port). */
  readonly address: string;
  readonly port: number;
  close(): Promise<void>;
}

/**
 * Reads a controller-runtime style bind address: ":8080" (all interfaces), "127.0.0.1:8081",
 * "[::1]:9000"; "0" or "" means disabled (undefined).
 */
export function parseBindAddress(value: string): { host: string | undefined; port: number } | undefined {
  const text = value.trim();
  if (text === '' || text === '0') return undefined;
  const match = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(text);
  if (match === null) throw new Error(`invalid bind address "${value}": use host:port, :port, or 0 to disable`);
  const host = match[1] ?? match[2];
  const port = Number(match[3]);
  if (port > 65535) throw new Error(`invalid bind address "${value}": port out of range`);
  return { host: host === '' || host === undefined ? undefined : host, port };
}

/** Starts a server on `address` (see parseBindAddress) and resolves once it listens. */
export async function listen(options: {
  address: { host: string | undefined; port: number };
  handler: http.RequestListener;
}): Promise<ServerHandle> {
  const server = http.createServer(options.handler);
  // Probes and scrapes are short; do not let idle keep-alive sockets hold shutdown up.
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.address.port, options.address.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = server.address() as AddressInfo;
  const host = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
  return {
    address: `${host}:${bound.port}`,
    port: bound.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
