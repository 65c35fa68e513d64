import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from '@jest/globals';
import { freePort, isRunning, resolveBinaries, startControlPlane, stopControlPlane } from '@metal-l2/local-control-plane';
import { repoRoot } from '@metal-l2/test-support/paths';
import { testClustersDir } from '@metal-l2/test-support/test-control-planes';

// freePort checks a port and returns it; another process can bind it before etcd or the API server
// does (CI saw EADDRINUSE). The start then goes again on fresh ports instead of failing the run.
const stateDir = join(testClustersDir, `port-race-${process.pid}-${Date.now()}`);
let held: Server | undefined;

afterAll(async () => {
  await stopControlPlane(stateDir);
  await new Promise((resolve) => held?.close(resolve) ?? resolve(undefined));
});

describe('startControlPlane', () => {
  test('a port taken between the check and the bind: etcd fails to bind, the start goes again on fresh ports', async () => {
    // A port another process holds, handed out as etcd's client port: what losing the race looks like.
    // It drops what connects (the start's health probe), so closing it waits for nothing.
    held = createServer((socket) => socket.destroy());
    const taken = await new Promise<number>((resolve) =>
      held?.listen(0, '127.0.0.1', () => resolve((held?.address() as { port: number }).port)),
    );
    const handedOut: number[] = [];
    const ports = async (): Promise<number> => {
      const port = handedOut.length === 0 ? taken : await freePort();
      handedOut.push(port);
      return port;
    };
    const state = await startControlPlane({ binaries: await resolveBinaries(repoRoot), stateDir, ownerPid: process.pid, freePort: ports });

    // The first attempt's etcd log says why it failed; the control plane answers on other ports.
    const firstEtcdLog = join(state.logDir, 'etcd.log.attempt-1');
    expect(existsSync(firstEtcdLog)).toBe(true);
    expect(await readFile(firstEtcdLog, 'utf8')).toMatch(/bind: address already in use/);
    expect(handedOut.slice(1)).not.toContain(taken);
    expect(new URL(state.server).port).not.toBe(String(taken));
    expect(await isRunning(state)).toBe(true);
  }, 180_000);
});
