import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, test } from '@jest/globals';
import * as k8s from '@kubernetes/client-node';
import { testKubeconfigPath } from '@metal-l2/test-support/cluster';
import { kinds, poolObject } from '@metal-l2/test-support/objects';
import { repoRoot } from '@metal-l2/test-support/paths';
import { timeouts } from '@metal-l2/test-support/timeouts';
import { waitFor } from '@metal-l2/test-support/wait-for';
import type { RunningIpamController } from '../src/start.js';
import { allBound, createClaims } from './support/claims.js';
import { useIpamNamespace } from './support/ipam-namespace.js';
import { runController } from './support/running-controller.js';

// Several writers on one pool: with leader election off (a misconfiguration or a split brain) the
// resourceVersion guard alone keeps addresses unique; with it on, a killed leader is replaced.
const space = useIpamNamespace('ipam-replicas');
const { kc, objects } = space;

describe('replicas', () => {
  test('two replicas without leader election never hand out an address twice', async () => {
    const replicas: RunningIpamController[] = [await runController(kc, space.ns), await runController(kc, space.ns)];
    try {
      await objects.create(kinds.pool, poolObject('shared', { addresses: ['10.80.0.0/24'], prefix: 24 }, space.ns));
      await createClaims(space.site, { pool: 'shared', prefix: 'r', to: 200 });
      const addresses = await allBound(space.site, { prefix: 'r', count: 200 });
      expect(new Set(addresses).size).toBe(200);
      const allocations = (await objects.get(kinds.pool, 'shared', space.ns))?.status?.allocations as Record<string, string>;
      expect(new Set(Object.values(allocations)).size).toBe(200);
    } finally {
      await Promise.all(replicas.map((r) => r.stop()));
    }
  });

  test('with leader election one replica leads; killing it hands the lease over and the burst completes', async () => {
    const main = join(repoRoot, 'packages', 'ipam-controller', 'dist', 'main.js');
    const lease = `ipam-${space.ns}`;
    const args = [
      main,
      '--kubeconfig',
      testKubeconfigPath(),
      '--namespace',
      space.ns,
      '--leader-elect',
      '--leader-election-namespace',
      space.ns,
      '--leader-election-id',
      lease,
      '--metrics-bind-address',
      '0',
      '--health-probe-bind-address',
      '0',
      '--webhook-port',
      '0',
      '--log-level',
      'warn',
    ];
    const start = (name: string): ChildProcess =>
      spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, POD_NAME: name } });
    const processes = new Map<string, ChildProcess>([
      ['replica-a', start('replica-a')],
      ['replica-b', start('replica-b')],
    ]);
    const coordination = kc.makeApiClient(k8s.CoordinationV1Api);
    try {
      const holder = await waitFor(
        'a leader',
        async () => {
          try {
            return (await coordination.readNamespacedLease({ namespace: space.ns, name: lease })).spec?.holderIdentity?.split('_')[0];
          } catch {
            return undefined;
          }
        },
        { timeoutMs: timeouts.claimBound },
      );
      await objects.create(kinds.pool, poolObject('elected', { addresses: ['10.81.0.0/24'], prefix: 24 }, space.ns));
      await createClaims(space.site, { pool: 'elected', prefix: 'e', to: 100 });
      await waitFor(
        'the first claims bound',
        async () => (await objects.list(kinds.address(), space.ns)).some((a) => a.metadata.name.startsWith('e-')),
        {
          timeoutMs: timeouts.claimBound,
        },
      );
      processes.get(holder)?.kill('SIGKILL');
      const next = await waitFor(
        'another leader',
        async () => {
          const identity = (await coordination.readNamespacedLease({ namespace: space.ns, name: lease })).spec?.holderIdentity?.split(
            '_',
          )[0];
          return identity !== undefined && identity !== holder ? identity : undefined;
        },
        { timeoutMs: 60_000 },
      );
      expect(next).not.toBe(holder);
      const addresses = await allBound(space.site, { prefix: 'e', count: 100 });
      expect(new Set(addresses).size).toBe(100);
    } finally {
      for (const p of processes.values()) p.kill('SIGKILL');
    }
  });
});
