// Starting to listen, for the simulator and its intercepting proxy alike: resolve once the socket
// is bound (reject if binding fails) and say which address a client on this machine should dial.

import type { Server } from 'node:net';

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
