import { describe, expect, test } from '@jest/globals';
import type { PacketMachine, PacketMachineTemplate } from '@metal-l2/api';
import { KubeApiError, type AdmissionRequest } from '@metal-l2/kube';
import { decidePause, packetMachineAdmissionHandler, type PacketMachineWebhookDeps } from './packet-machine-webhook.js';

const NOW = new Date('2026-12-01T08:30:00.123Z');
const PAUSED = 'cluster.x-k8s.io/paused';
const HOLD = 'network.metal.x-k8s.io/hold';
const TEMPLATE = 'network.metal.x-k8s.io/template';
const FROM_NAME = 'cluster.x-k8s.io/cloned-from-name';

function machine(annotations: Record<string, string> | undefined, spec: PacketMachine['spec'] = {}): PacketMachine {
  return { metadata: { namespace: 'ns', name: 'm-1', ...(annotations === undefined ? {} : { annotations }) }, spec };
}

interface DecisionCase {
  name: string;
  machine: PacketMachine;
  templateName: string | undefined;
  want: ReturnType<typeof decidePause>;
}

describe('decidePause', () => {
  test.each<DecisionCase>([
    {
      name: 'a linked machine without annotations gets the whole annotations map',
      machine: machine(undefined),
      templateName: 'l2',
      want: {
        kind: 'pause',
        templateName: 'l2',
        patch: [{ op: 'add', path: '/metadata/annotations', value: { [PAUSED]: '', [HOLD]: '2026-12-01T08:30:00Z' } }],
      },
    },
    {
      name: 'a linked machine with annotations gets two keys, slashes escaped',
      machine: machine({ [TEMPLATE]: 'l2' }),
      templateName: 'l2',
      want: {
        kind: 'pause',
        templateName: 'l2',
        patch: [
          { op: 'add', path: '/metadata/annotations/cluster.x-k8s.io~1paused', value: '' },
          { op: 'add', path: '/metadata/annotations/network.metal.x-k8s.io~1hold', value: '2026-12-01T08:30:00Z' },
        ],
      },
    },
    {
      name: 'a stale hold marker without a pause is renewed with the pause',
      machine: machine({ [HOLD]: '2020-01-01T00:00:00Z' }),
      templateName: 'l2',
      want: {
        kind: 'pause',
        templateName: 'l2',
        patch: [
          { op: 'add', path: '/metadata/annotations/cluster.x-k8s.io~1paused', value: '' },
          { op: 'add', path: '/metadata/annotations/network.metal.x-k8s.io~1hold', value: '2026-12-01T08:30:00Z' },
        ],
      },
    },
    {
      name: 'a provisioned machine (clusterctl move, restore) passes',
      machine: machine(undefined, { providerID: 'equinixmetal://d-1' }),
      templateName: 'l2',
      want: { kind: 'pass', why: 'provisioned' },
    },
    { name: 'an unlinked machine passes', machine: machine({}), templateName: undefined, want: { kind: 'pass', why: 'unlinked' } },
    {
      name: 'a machine we hold already (moved while held) passes',
      machine: machine({ [PAUSED]: '', [HOLD]: '2026-12-01T08:00:00Z' }),
      templateName: 'l2',
      want: { kind: 'pass', why: 'held-already' },
    },
    {
      name: 'a machine paused by someone else is left alone, without our marker',
      machine: machine({ [PAUSED]: 'true' }),
      templateName: 'l2',
      want: { kind: 'paused-by-someone-else', templateName: 'l2' },
    },
    {
      name: 'an empty providerID is not provisioned',
      machine: machine(undefined, { providerID: '' }),
      templateName: undefined,
      want: { kind: 'pass', why: 'unlinked' },
    },
  ])('$name', ({ machine: m, templateName, want }) => {
    expect(decidePause(m, { templateName, now: NOW })).toEqual(want);
  });
});

function request(object: unknown, overrides: Partial<AdmissionRequest> = {}): AdmissionRequest {
  return {
    uid: 'u-1',
    operation: 'CREATE',
    kind: { group: 'infrastructure.cluster.x-k8s.io', version: 'v1beta1', kind: 'PacketMachine' },
    namespace: 'ns',
    object,
    ...overrides,
  };
}

function deps(get: PacketMachineWebhookDeps['client']['get'], readTimeoutMs = 1_000): PacketMachineWebhookDeps {
  return { client: { get }, now: () => NOW, readTimeoutMs };
}

const annotatedTemplate: PacketMachineTemplate = {
  metadata: { namespace: 'ns', name: 'workers', annotations: { [TEMPLATE]: 'l2' } },
  spec: { template: { spec: {} } },
};

describe('packetMachineAdmissionHandler', () => {
  test('pauses a machine cloned from an annotated PacketMachineTemplate, namespace taken from the request', async () => {
    const asked: unknown[] = [];
    const handler = packetMachineAdmissionHandler(
      deps((type, key) => {
        asked.push([type.kind, key]);
        return Promise.resolve(annotatedTemplate as never);
      }),
    );
    const obj = { metadata: { name: 'm-1', annotations: { [FROM_NAME]: 'workers' } }, spec: {} };
    const verdict = await handler(request(obj));
    expect(asked).toEqual([
      ['PacketMachineTemplate', { namespace: 'ns', name: 'workers' }],
      ['MachineNetworkTemplate', { namespace: 'ns', name: 'l2' }],
    ]);
    expect(verdict).toEqual({
      allowed: true,
      patch: [
        { op: 'add', path: '/metadata/annotations/cluster.x-k8s.io~1paused', value: '' },
        { op: 'add', path: '/metadata/annotations/network.metal.x-k8s.io~1hold', value: '2026-12-01T08:30:00Z' },
      ],
    });
  });

  test('with a watched namespace, a linked machine elsewhere passes untouched and nothing is read', async () => {
    const asked: unknown[] = [];
    const handler = packetMachineAdmissionHandler({
      ...deps((type, key) => {
        asked.push([type.kind, key]);
        return Promise.resolve(annotatedTemplate as never);
      }),
      namespace: 'team-a',
    });
    const linked = { metadata: { name: 'm-1', annotations: { [TEMPLATE]: 'l2' } }, spec: {} };
    expect(await handler(request(linked, { namespace: 'team-b' }))).toEqual({ allowed: true });
    expect(asked).toEqual([]);
    const held = await handler(request(linked, { namespace: 'team-a' }));
    expect(held).toMatchObject({ allowed: true, patch: expect.any(Array) });
  });

  test('refuses the machine, saying why, when the PacketMachineTemplate cannot be read', async () => {
    const forbidden = new KubeApiError({
      action: 'get PacketMachineTemplate ns/workers',
      status: 403,
      reason: 'Forbidden',
      detail: 'forbidden: no',
    });
    const handler = packetMachineAdmissionHandler(deps(() => Promise.reject(forbidden)));
    const verdict = await handler(request(machine({ [FROM_NAME]: 'workers' })));
    expect(verdict.allowed).toBe(false);
    expect(verdict).toMatchObject({
      message: expect.stringContaining(
        'reading PacketMachineTemplate ns/workers failed (get PacketMachineTemplate ns/workers: forbidden: no)',
      ),
    });
    expect(verdict).toMatchObject({ message: expect.stringContaining('may get packetmachinetemplates') });
  });

  test('refuses the machine when the API server does not answer in time', async () => {
    const hang: PacketMachineWebhookDeps['client']['get'] = (_type, _key, options) =>
      new Promise((_resolve, reject) => options?.signal?.addEventListener('abort', () => reject(new Error('aborted'))));
    const verdict = await packetMachineAdmissionHandler(deps(hang, 50))(request(machine({ [FROM_NAME]: 'workers' })));
    expect(verdict).toMatchObject({ allowed: false, message: expect.stringContaining('no answer within 50 ms') });
  });

  test('needs no PacketMachineTemplate for a provisioned or directly annotated machine: failing reads do not matter', async () => {
    const handler = packetMachineAdmissionHandler(deps(() => Promise.reject(new Error('must not be called'))));
    expect(await handler(request(machine({ [FROM_NAME]: 'workers' }, { providerID: 'equinixmetal://d' })))).toEqual({ allowed: true });
    expect(await handler(request(machine({ [TEMPLATE]: 'l2' })))).toMatchObject({ allowed: true, patch: expect.any(Array) });
    expect(await handler(request(machine({})))).toEqual({ allowed: true });
  });

  test('warns, and adds nothing, when someone else paused the machine', async () => {
    const handler = packetMachineAdmissionHandler(deps(() => Promise.resolve(undefined)));
    const verdict = await handler(request(machine({ [TEMPLATE]: 'l2', [PAUSED]: '' })));
    expect(verdict).toEqual({
      allowed: true,
      warnings: [
        expect.stringContaining('will not remove that pause'),
        'MachineNetworkTemplate ns/l2 not found: the machine stays paused until it exists',
      ],
    });
  });

  test('holds a machine whose MachineNetworkTemplate does not exist (yet), with a warning', async () => {
    const handler = packetMachineAdmissionHandler(deps(() => Promise.resolve(undefined)));
    expect(await handler(request(machine({ [TEMPLATE]: 'l2' })))).toEqual({
      allowed: true,
      patch: expect.any(Array),
      warnings: ['MachineNetworkTemplate ns/l2 not found: the machine stays paused until it exists'],
    });
  });

  test('answers a dry run like any request', async () => {
    const handler = packetMachineAdmissionHandler(deps(() => Promise.resolve(undefined)));
    expect(await handler(request(machine({ [TEMPLATE]: 'l2' }), { dryRun: true }))).toMatchObject({
      allowed: true,
      patch: expect.any(Array),
    });
  });

  test('lets other operations through and refuses a request without an object', async () => {
    const handler = packetMachineAdmissionHandler(deps(() => Promise.resolve(undefined)));
    expect(await handler(request(machine({ [TEMPLATE]: 'l2' }), { operation: 'UPDATE' }))).toEqual({ allowed: true });
    expect(await handler(request(undefined))).toEqual({ allowed: false, message: 'the request carries no PacketMachine object' });
  });
});
