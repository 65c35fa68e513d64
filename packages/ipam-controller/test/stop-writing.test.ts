import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { builtinTypes, KubeClient, type Lease } from '@metal-l2/kube';
import type { FaultRule, Simulator } from '@metal-l2/metal-sim';
import { testKubeconfigPath } from '@metal-l2/test-support/cluster';
import { expectNoContractViolations } from '@metal-l2/test-support/contract';
import { kinds } from '@metal-l2/test-support/objects';
import { repoRoot } from '@metal-l2/test-support/paths';
import { timeouts } from '@metal-l2/test-support/timeouts';
import { waitFor } from '@metal-l2/test-support/wait-for';
import { capturedLogger, createCredentials, runVrfController, startMetal, TOKEN, vrfPoolObject } from './support/metal.js';
import { useIpamNamespace } from './support/ipam-namespace.js';

// A controller told to stop (shutdown) or no longer allowed to write (its lease is gone) stops
// writing at once: the reconcile in progress, stuck in a slow Metal call, has that call cancelled,
// and nothing reaches Metal or the API server afterwards. Only the call already on its way lands.
const space = useIpamNamespace('ipam-stop-writing', {
  // No controller is left to remove the pools' finalizers: drop them so the namespaces can go.
  beforeTeardown: async () => {
    for (const ns of space.namespaces) {
      for (const pool of await objects.list(kinds.pool, ns)) {
        await objects.patch(kinds.pool, pool.metadata.name, ns, { metadata: { finalizers: null } });
      }
    }
  },
});
const { kc, objects } = space;
const client = KubeClient.fromKubeConfig(kc);
let sim: Simulator;

/** Long enough that waiting for the slow call to finish is clearly not what happened. */
const slowCreateMs = 20_000;

beforeAll(async () => {
  sim = await startMetal({ seed: 'stop-writing' });
});

afterAll(async () => {
  client.close();
  await sim.contract?.close();
  await sim.close();
  expectNoContractViolations(sim.contract);
});

async function namespaceWithSecret(prefix: string): Promise<string> {
  const ns = await space.extraNamespace(prefix);
  await createCredentials(kc, ns);
  return ns;
}

/** A pool whose VRF create hangs in Metal for slowCreateMs; resolves once that call is on its way. */
async function poolStuckInVrfCreate(ns: string, range: string): Promise<{ slowCreate: FaultRule; resourceVersion: string }> {
  const slowCreate = sim.faults.add({ fault: 'latency', operationId: 'createVrf', latencyMs: slowCreateMs, times: 1 });
  const pool = vrfPoolObject('slow', ns, {
    addresses: [range.replace('.0.0/16', '.1.0/24')],
    create: { name: `slow-${ns}`, ipRanges: [range] },
  });
  await objects.create(kinds.pool, pool);
  await waitFor('the VRF create to reach Metal', () => slowCreate.matched === 1, { timeoutMs: timeouts.claimBound });
  const written = await objects.get(kinds.pool, 'slow', ns);
  return { slowCreate, resourceVersion: written?.metadata.resourceVersion ?? '' };
}

/** Waits until Metal answered the slow call (it acted), then lists what reached it after `mark`. */
async function callsAfter(mark: number): Promise<(string | undefined)[]> {
  await waitFor('the slow VRF create to be answered', () => sim.requests.count({ afterSeq: mark, operationId: 'createVrf' }) === 1, {
    timeoutMs: slowCreateMs + timeouts.claimBound,
  });
  return sim.requests.entries({ afterSeq: mark }).map((e) => e.operationId);
}

describe('stop writing', () => {
  test('a reconcile in progress sees its signal aborted on shutdown: its Metal call is cancelled, nothing follows', async () => {
    const ns = await namespaceWithSecret('ipam-stop');
    const { logger, lines } = capturedLogger();
    const controller = await runVrfController(kc, ns, { sim, logger });
    const { resourceVersion } = await poolStuckInVrfCreate(ns, '10.61.0.0/16');
    const mark = sim.requests.lastSeq();
    const stoppingAt = performance.now();
    await controller.stop();
    // Not the slow call's 20 s, nor the 30 s graceful shutdown timeout.
    expect(performance.now() - stoppingAt).toBeLessThan(slowCreateMs / 4);
    const interrupted = lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l['msg'] === 'reconcile interrupted by shutdown');
    expect(interrupted).toMatchObject({ name: 'slow', namespace: ns });
    expect(await callsAfter(mark)).toEqual(['createVrf']);
    expect((await objects.get(kinds.pool, 'slow', ns))?.metadata.resourceVersion).toBe(resourceVersion);
    expect(lines.join('')).not.toContain(TOKEN);
  });

  test('a controller whose lease is taken exits at once, non-zero, and writes nothing after', async () => {
    const ns = await namespaceWithSecret('ipam-lost-lease');
    const lease = 'ipam-lost-lease';
    const main = join(repoRoot, 'packages', 'ipam-controller', 'dist', 'main.js');
    // prettier-ignore
    const args = [
      main, '--kubeconfig', testKubeconfigPath(), '--namespace', ns, '--controller-namespace', ns,
      '--leader-elect', '--leader-election-namespace', ns, '--leader-election-id', lease,
      '--metal-api-url', sim.baseUrl, '--metrics-bind-address', '0', '--health-probe-bind-address', '0',
      '--webhook-port', '0', '--log-level', 'info',
    ];
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, POD_NAME: 'replica' } });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
    });
    const exited = new Promise<{ code: number | null; at: number }>((resolve) =>
      child.on('exit', (code) => resolve({ code, at: performance.now() })),
    );
    let exit: { code: number | null; at: number } | undefined;
    void exited.then((e) => {
      exit = e;
    });
    try {
      const held = await waitFor(
        'the controller to lead',
        async () => {
          const current = await client.get<Lease>(builtinTypes.lease, { namespace: ns, name: lease });
          return current?.spec?.holderIdentity?.startsWith('replica_') === true ? current : undefined;
        },
        { timeoutMs: timeouts.claimBound },
      );
      const { resourceVersion } = await poolStuckInVrfCreate(ns, '10.62.0.0/16');
      const mark = sim.requests.lastSeq();
      // Another identity takes the Lease (an operator, a split brain): from here on, writes are
      // no longer ours to make. The controller notices at its next renewal.
      const current = (await client.get<Lease>(builtinTypes.lease, { namespace: ns, name: lease })) ?? held;
      await client.replace<Lease>(builtinTypes.lease, {
        ...current,
        spec: { ...current.spec, holderIdentity: 'intruder', leaseDurationSeconds: 60 },
      });
      const stolenAt = performance.now();
      // Within a retry period (2 s, jittered) plus start-up slack; not after the slow call.
      const { code, at } = await waitFor('the controller to exit', () => exit, { timeoutMs: slowCreateMs / 2 });
      expect(code).toBe(1);
      expect(at - stolenAt).toBeLessThan(slowCreateMs / 2);
      const lost = stdout
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find((l) => l['msg'] === 'lost leadership, exiting');
      expect(lost).toMatchObject({ level: 'error', exitCode: 1 });
      // Metal acted on the call already on its way; nothing else reached it.
      expect(await callsAfter(mark)).toEqual(['createVrf']);
      // Nor the API server: the pool was not written (no status for the VRF Metal made), and the
      // Lease is still the intruder's (no release, no renewal over it).
      const pool = await objects.get(kinds.pool, 'slow', ns);
      expect(pool?.metadata.resourceVersion).toBe(resourceVersion);
      const after = await client.get<Lease>(builtinTypes.lease, { namespace: ns, name: lease });
      expect(after?.spec?.holderIdentity).toBe('intruder');
      expect(stdout).not.toContain(TOKEN);
    } finally {
      if (exit === undefined) child.kill('SIGKILL');
    }
  });
});
