// Start options: TLS, a seed file, deterministic ids from --seed, fault rules given at start.

import { describe, expect, test } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { Agent, get as httpGet, type IncomingMessage } from 'node:http';
import { request } from 'node:https';
import type { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { ManualClock } from '../src/clock.js';
import { ContractValidator } from '../src/contract.js';
import type { FaultRuleInput } from '../src/faults.js';
import { IDLE_KEEP_ALIVE_MS } from '../src/listen.js';
import { staysTrue } from '@metal-l2/test-support/wait-for';
import { loadSeedFile } from '../src/seed.js';
import { startSimulator, type Simulator, type SimulatorOptions } from '../src/server.js';
import type { DeviceWire } from '../src/wire.js';
import { Api, describeContractOf, useContract } from './support/harness.js';

const contract = useContract();

/** Every simulator of this file reports to the file's contract validator. */
function checked<T extends object>(options: T): T & { contract?: NonNullable<ReturnType<typeof contract>> } {
  const validator = contract();
  return validator === undefined ? options : { ...options, contract: validator };
}

const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

async function withSim<T>(sim: Simulator, fn: (sim: Simulator) => Promise<T>): Promise<T> {
  try {
    return await fn(sim);
  } finally {
    await sim.close();
  }
}

/** A device in the seed's first project, with the plan and metro every default seed has. */
async function createDevice(sim: Simulator): Promise<DeviceWire> {
  const projectId = [...sim.store.projects.values()][0]?.id ?? '';
  const body = { metro: 'da', plan: 'c3.small.x86', operating_system: 'ubuntu_22_04' };
  return (await new Api(sim.baseUrl).post<DeviceWire>(`/projects/${projectId}/devices`, body)).body;
}

describe('simulator options', () => {
  test('TLS: the API answers over HTTPS with the given certificate', async () => {
    const [cert, key] = await Promise.all([readFile(fixture('tls-cert.pem')), readFile(fixture('tls-key.pem'))]);
    await withSim(await startSimulator(checked({ tls: { cert, key } })), async (sim) => {
      expect(sim.url.startsWith('https://127.0.0.1:')).toBe(true);
      const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request(`${sim.baseUrl}/projects`, { ca: cert, headers: { 'x-auth-token': 'sim-token' } }, (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        });
        req.on('error', reject);
        req.end();
      });
      expect(status).toBe(200);
      expect((JSON.parse(body) as { projects: unknown[] }).projects).toHaveLength(1);
    });
  });

  test('a YAML seed file gives the projects, tokens, plans and metros', async () => {
    const seedConfig = await loadSeedFile(fixture('seed-two-projects.yaml'));
    await withSim(await startSimulator(checked({ seedConfig, clock: new ManualClock() })), async (sim) => {
      const capi = '3f0c2f1e-0d3b-4a59-9c56-4b0f6f6d2a11';
      const scoped = new Api(sim.baseUrl, 'capi-token');
      expect((await scoped.get<{ projects: { id: string }[] }>('/projects')).body.projects.map((p) => p.id)).toEqual([capi]);
      expect((await new Api(sim.baseUrl, 'user-token').get<{ projects: unknown[] }>('/projects')).body.projects).toHaveLength(2);
      expect((await new Api(sim.baseUrl, 'sim-token').get('/projects')).status).toBe(401);
      const device = await scoped.post<DeviceWire>(`/projects/${capi}/devices`, {
        metro: 'am',
        plan: 'n3.xlarge.x86',
        operating_system: 'flatcar_stable',
      });
      expect(device.status).toBe(201);
      expect(device.body.network_ports.filter((p) => p.type === 'NetworkBondPort')).toHaveLength(2);
      expect(
        (await scoped.post(`/projects/${capi}/devices`, { metro: 'sv', plan: 'c3.small.x86', operating_system: 'flatcar_stable' })).status,
      ).toBe(422);
    });
  });

  test('the same seed and calls give the same ids and MACs; another seed gives others', async () => {
    const run = async (seed: string): Promise<string[]> =>
      withSim(await startSimulator(checked({ seed, clock: new ManualClock() })), async (sim) => {
        const d = await createDevice(sim);
        return [d.project.href, d.id, ...d.network_ports.map((p) => `${p.id} ${p.data.mac ?? ''}`)];
      });
    const first = await run('fixed-seed');
    expect(await run('fixed-seed')).toEqual(first);
    expect(await run('another-seed')).not.toEqual(first);
    expect(first[1]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  test('fault rules given at start are active from the first call', async () => {
    await withSim(
      await startSimulator(checked({ faults: [{ fault: 'rate-limit' as const, operationId: 'findProjects', times: 1 }] })),
      async (sim) => {
        const api = new Api(sim.baseUrl);
        expect((await api.get('/projects')).status).toBe(429);
        expect((await api.get('/projects')).status).toBe(200);
      },
    );
  });

  test('a misspelled delay or fault rule at start is refused, naming it, instead of silently ignored', async () => {
    /** The start's error message; a simulator that started anyway is closed, so the test fails instead of hanging. */
    const refusal = (options: SimulatorOptions): Promise<string> =>
      startSimulator(options).then(
        (started) => started.close().then(() => 'started'),
        (err: unknown) => (err instanceof Error ? err.message : String(err)),
      );
    expect(await refusal({ delays: { deviceQueuedMS: 0 } as Record<string, number> })).toContain(
      'delays: unknown key deviceQueuedMS (known: deviceQueuedMs,',
    );
    expect(await refusal({ delays: { batchQueuedMs: -1 } })).toContain('delays.batchQueuedMs must be a non-negative');
    expect(await refusal({ faults: [{ fault: 'drop', count: 1 }] as unknown as FaultRuleInput[] })).toContain('unknown key count');
  });

  test('a spec operation the simulator does not serve is reported as a contract violation', async () => {
    const validator = contract();
    if (validator === undefined) return; // without the spec there is nothing to compare with
    const own = await ContractValidator.load(validator.specPath);
    try {
      await withSim(await startSimulator({ contract: own }), async (sim) => {
        const res = await new Api(sim.baseUrl).get('/devices/00000000-0000-4000-8000-000000000000/bgp/neighbors');
        expect({ status: res.status, body: res.body }).toEqual({ status: 404, body: { error: 'Not found' } });
        expect(own.report().violations).toMatchObject([
          { operationId: 'getBgpNeighborData', messages: [expect.stringContaining('does not serve it')] },
        ]);
      });
    } finally {
      await own.close();
    }
  });

  test('an idle keep-alive connection outlives Node’s 5 s default: the next request on it is answered, not reset', async () => {
    // Failed before: Node closed idle sockets after 5 s, and a client reusing one under load got ECONNRESET.
    await withSim(await startSimulator(checked({})), async (sim) => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      try {
        const first = await getOn(agent, `${sim.url}/metadata/none`);
        expect(first.headers['keep-alive']).toBe(`timeout=${IDLE_KEEP_ALIVE_MS / 1000}`);
        // Watched, not slept: fails as soon as the simulator closes the idle socket.
        await staysTrue('the idle connection open past Node’s 5 s default', () => !first.socket.destroyed, 6_000);
        const second = await getOn(agent, `${sim.url}/metadata/none`);
        expect(second.reused).toBe(true);
        expect(second.status).toBe(first.status);
      } finally {
        agent.destroy();
      }
    });
  }, 20_000);

  test('publicUrl is what devices are told to call back', async () => {
    const clock = new ManualClock();
    await withSim(await startSimulator(checked({ clock, publicUrl: 'https://metadata.example.test/' })), async (sim) => {
      const d = await createDevice(sim);
      clock.advance(60_000);
      expect(sim.metadataUrl(d.id)).toBe(`https://metadata.example.test/metadata/${d.id}`);
      const doc = (await (await fetch(`${sim.url}/metadata/${d.id}`)).json()) as { user_state_url: string };
      expect(doc.user_state_url).toBe(`https://metadata.example.test/metadata/${d.id}/events`);
    });
  });
});

/** A GET through `agent`: its status, headers, and whether it went over a reused socket. */
async function getOn(
  agent: Agent,
  url: string,
): Promise<{ status: number; headers: IncomingMessage['headers']; reused: boolean; socket: Socket }> {
  return new Promise((resolve, reject) => {
    const req = httpGet(url, { agent }, (res) => {
      // Taken now: the response lets go of its socket when it ends (the agent keeps it).
      const socket = res.socket;
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, reused: req.reusedSocket, socket }));
    });
    req.on('error', reject);
  });
}

describeContractOf(contract);
