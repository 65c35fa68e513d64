import { createServer } from 'node:net';

/**
 * Where free ports are looked for: below Linux's ephemeral range (32768 and up by default). The
 * kernel hands ports of that range to outgoing connections, so a port it offered free could be
 * taken by a connection between this check and the server binding it (the demo's IPAM webhook
 * failed once with EADDRINUSE). Ports below the range go only to programs that ask for them.
 */
const RANGE = { from: 20_000, to: 32_000 } as const;
const ATTEMPTS = 50;

/** A TCP port free right now on every address. Racy by nature; callers retry a start that loses the race. */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const port = RANGE.from + Math.floor(Math.random() * (RANGE.to - RANGE.from));
    if (await canListen(port)) return port;
  }
  throw new Error(`no free TCP port found between ${RANGE.from} and ${RANGE.to} in ${ATTEMPTS} tries`);
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '0.0.0.0', () => server.close(() => resolve(true)));
  });
}
