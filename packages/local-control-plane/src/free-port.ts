import { createServer } from 'node:net';

/** Asks the kernel for a free loopback port. Racy by nature; callers retry a start that loses the race. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address !== null && typeof address === 'object') resolve(address.port);
        else reject(new Error('could not read the port the kernel chose'));
      });
    });
  });
}
