import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, test } from '@jest/globals';
import { testKubeconfigPath } from '@metal-l2/test-support/cluster';
import { kinds, poolObject } from '@metal-l2/test-support/objects';
import { repoRoot } from '@metal-l2/test-support/paths';
import { timeouts } from '@metal-l2/test-support/timeouts';
import { waitFor } from '@metal-l2/test-support/wait-for';
import type { RunningIpamController } from '../src/start.js';
import { allBound, createClaims } from './support/claims.js';
import { useIpamNamespace } from './support/ipam-namespace.js';
import { runController } from './support/running-controller.js';

// Checklist item 16: uniqueness under load, and across a controller killed with SIGKILL mid-burst.
const space = useIpamNamespace('ipam-burst');
const { kc, objects } = space;

describe('bursts', () => {
  test('500 claims created at once on one pool all bind with distinct addresses', async () => {
    let controller: RunningIpamController | undefined;
    try {
      controller = await runController(kc, space.ns);
      await objects.create(kinds.pool, poolObject('burst', { addresses: ['10.40.0.0/22'], prefix: 22, gateway: '10.40.0.1' }, space.ns));
      const started = Date.now();
      await createClaims(space.site, { pool: 'burst', prefix: 'b', to: 500 });
      const addresses = await allBound(space.site, { prefix: 'b', count: 500 });
      const seconds = (Date.now() - started) / 1000;
      process.stderr.write(
        `500-claim burst bound in ${seconds.toFixed(1)} s (${(500 / seconds).toFixed(0)} claims/s, creation included)\n`,
      );
      expect(new Set(addresses).size).toBe(500);
      expect(addresses).not.toContain('10.40.0.1');
      const pool = await objects.get(kinds.pool, 'burst', space.ns);
      expect(Object.keys(pool?.status?.allocations ?? {})).toHaveLength(500);
    } finally {
      await controller?.stop();
    }
  });

  test('a controller killed with SIGKILL mid-burst and restarted ends with every claim bound once', async () => {
    const main = join(repoRoot, 'packages', 'ipam-controller', 'dist', 'main.js');
    const args = [
      main,
      '--kubeconfig',
      testKubeconfigPath(),
      '--namespace',
      space.ns,
      '--leader-elect=false',
      '--metrics-bind-address',
      '0',
      '--health-probe-bind-address',
      '0',
      '--webhook-port',
      '0',
      '--log-level',
      'warn',
    ];
    const startProcess = (): ChildProcess => spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'inherit'] });
    await objects.create(kinds.pool, poolObject('crash', { addresses: ['10.41.0.0/23'], prefix: 23 }, space.ns));
    let child = startProcess();
    try {
      await createClaims(space.site, { pool: 'crash', prefix: 'k', to: 300 });
      // Kill it once it is visibly mid-burst: some claims bound, not all.
      await waitFor(
        'the first claims bound',
        async () => (await objects.list(kinds.address(), space.ns)).filter((a) => a.metadata.name.startsWith('k-')).length >= 20,
        { timeoutMs: timeouts.burstBound, intervalMs: 50 },
      );
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
      child = startProcess();
      const addresses = await allBound(space.site, { prefix: 'k', count: 300 });
      expect(new Set(addresses).size).toBe(300);
      const pool = await objects.get(kinds.pool, 'crash', space.ns);
      const allocations = pool?.status?.allocations as Record<string, string>;
      expect(Object.keys(allocations)).toHaveLength(300);
      expect(new Set(Object.values(allocations)).size).toBe(300);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
