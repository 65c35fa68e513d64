import { request as httpsRequest, type RequestOptions } from 'node:https';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as k8s from '@kubernetes/client-node';
import { AdmissionServer, KubeClient, silentLogger } from '@metal-l2/kube';
import { makeServingCertificate } from '@metal-l2/test-support/certificates';
import { createTestNamespace, deleteTestNamespace, loadKubeConfig } from '@metal-l2/test-support/cluster';
import { installCrds, projectCrds, upstreamCrds } from '@metal-l2/test-support/crds';
import { Objects, type Kind, type Obj } from '@metal-l2/test-support/objects';
import { timeouts } from '@metal-l2/test-support/timeouts';
import { waitFor } from '@metal-l2/test-support/wait-for';
import { packetMachineAdmissionHandler } from '../src/webhook/packet-machine-webhook.js';
import { NetworkWebhookPaths } from '../src/webhook/paths.js';
import { templateAdmissionHandler } from '../src/webhook/template-webhook.js';

// Both webhooks, served over HTTPS by the kube AdmissionServer and called by the real API server,
// plus the MachineNetworkTemplate CRD's own schema and CEL rules.

const kinds = {
  packetMachine: {
    group: 'infrastructure.cluster.x-k8s.io',
    version: 'v1beta1',
    plural: 'packetmachines',
    kind: 'PacketMachine',
    namespaced: true,
  },
  packetMachineTemplate: {
    group: 'infrastructure.cluster.x-k8s.io',
    version: 'v1beta1',
    plural: 'packetmachinetemplates',
    kind: 'PacketMachineTemplate',
    namespaced: true,
  },
  template: {
    group: 'network.metal.x-k8s.io',
    version: 'v1alpha1',
    plural: 'machinenetworktemplates',
    kind: 'MachineNetworkTemplate',
    namespaced: true,
  },
} as const satisfies Record<string, Kind>;

const PAUSED = 'cluster.x-k8s.io/paused';
const HOLD = 'network.metal.x-k8s.io/hold';
const TEMPLATE = 'network.metal.x-k8s.io/template';
const FROM_NAME = 'cluster.x-k8s.io/cloned-from-name';
const FROM_GROUP_KIND = 'cluster.x-k8s.io/cloned-from-groupkind';
const RESTRICTED_PATH = '/mutate-as-nobody';

const kc = loadKubeConfig();
const objects = new Objects(kc);
const custom = kc.makeApiClient(k8s.CustomObjectsApi);
const admission = kc.makeApiClient(k8s.AdmissionregistrationV1Api);
const client = KubeClient.fromKubeConfig(kc);
const nobody = KubeClient.fromKubeConfig(asNobody(kc));
const stop = new AbortController();
let server: AdmissionServer | undefined;
let serving: Promise<void> | undefined;
let ns = '';
/** A namespace whose PacketMachine webhook reads as a user without RBAC: every template read fails. */
let restrictedNs = '';
const configName = (kind: string): string => `metal-l2-network-test-${kind}-${ns}`;

/** The same API server as a user nobody granted anything. */
function asNobody(config: k8s.KubeConfig): k8s.KubeConfig {
  const user = config.getCurrentUser();
  const cluster = config.getCurrentCluster();
  if (user === null || cluster === null) throw new Error('the test kubeconfig has no current user or cluster');
  const restricted = new k8s.KubeConfig();
  restricted.loadFromOptions({
    clusters: [cluster],
    users: [{ ...user, impersonateUser: 'metal-l2-nobody' }],
    contexts: [{ name: 'nobody', cluster: cluster.name, user: user.name }],
    currentContext: 'nobody',
  });
  return restricted;
}

async function rejection(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (err: unknown) {
    if (err instanceof k8s.ApiException) return String(err.body);
    throw err;
  }
  throw new Error('expected the API server to refuse the request');
}

function packetMachine(name: string, options: { annotations?: Record<string, string>; providerID?: string; namespace?: string } = {}): Obj {
  return {
    metadata: {
      name,
      namespace: options.namespace ?? ns,
      ...(options.annotations === undefined ? {} : { annotations: options.annotations }),
    },
    spec: {
      machineType: 'c3.small.x86',
      os: 'ubuntu_22_04',
      ...(options.providerID === undefined ? {} : { providerID: options.providerID }),
    },
  };
}

function packetMachineTemplate(name: string, annotations: Record<string, string>, namespace = ns): Obj {
  return { metadata: { name, namespace, annotations }, spec: { template: { spec: { machineType: 'c3.small.x86', os: 'ubuntu_22_04' } } } };
}

function template(name: string, ports: unknown[]): Obj {
  return { metadata: { name, namespace: ns }, spec: { ports } };
}

const pool = { apiGroup: 'ipam.metal.x-k8s.io', kind: 'InClusterIPPool', name: 'vrf-pool' };

/** POSTs an object and returns the API server's status and Warning headers (the typed clients drop them). */
async function createWithWarnings(kind: Kind, obj: Obj): Promise<{ status: number; warnings: string[] }> {
  const cluster = kc.getCurrentCluster();
  if (cluster === null) throw new Error('no current cluster');
  const url = new URL(`${cluster.server}/apis/${kind.group}/${kind.version}/namespaces/${obj.metadata.namespace ?? ''}/${kind.plural}`);
  const options: RequestOptions = { method: 'POST', headers: { 'content-type': 'application/json' } };
  await kc.applyToHTTPSOptions(options);
  const body = JSON.stringify({ apiVersion: `${kind.group}/${kind.version}`, kind: kind.kind, ...obj });
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, options, (res) => {
      res.resume();
      res.on('end', () => {
        // One Warning header per warning; res.headers would join them with commas.
        const warnings = res.rawHeaders.filter((_value, i) => i % 2 === 1 && res.rawHeaders[i - 1]?.toLowerCase() === 'warning');
        resolve({ status: res.statusCode ?? 0, warnings });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

beforeAll(async () => {
  await installCrds(kc, [...(await upstreamCrds('capp')), ...(await projectCrds())]);
  ns = await createTestNamespace(kc, 'network-webhooks');
  restrictedNs = await createTestNamespace(kc, 'network-webhooks-restricted');
  const { certDir, caBundle } = await makeServingCertificate();
  server = new AdmissionServer({
    port: 0,
    host: '127.0.0.1',
    certDir,
    logger: silentLogger(),
    handlers: {
      [NetworkWebhookPaths.packetMachine]: packetMachineAdmissionHandler({ client, now: () => new Date() }),
      [RESTRICTED_PATH]: packetMachineAdmissionHandler({ client: nobody, now: () => new Date() }),
      [NetworkWebhookPaths.machineNetworkTemplate]: templateAdmissionHandler(),
    },
  });
  serving = server.start(stop.signal);
  const port = await waitFor('the webhook server to listen', () => (server?.port() ?? 0) > 0 && server?.port(), {
    timeoutMs: timeouts.webhookReady,
  });
  const url = (path: string): string => `https://127.0.0.1:${port}${path}`;
  const inNamespace = (name: string): k8s.V1LabelSelector => ({ matchLabels: { 'kubernetes.io/metadata.name': name } });
  const mutating = (name: string, path: string, namespace: string): k8s.V1MutatingWebhook => ({
    name: `${name}.${ns}.network.metal.x-k8s.io`,
    admissionReviewVersions: ['v1'],
    sideEffects: 'None',
    failurePolicy: 'Fail',
    reinvocationPolicy: 'Never',
    timeoutSeconds: 10,
    clientConfig: { url: url(path), caBundle },
    rules: [
      { apiGroups: ['infrastructure.cluster.x-k8s.io'], apiVersions: ['v1beta1'], operations: ['CREATE'], resources: ['packetmachines'] },
    ],
    namespaceSelector: inNamespace(namespace),
  });
  await admission.createMutatingWebhookConfiguration({
    body: {
      metadata: { name: configName('mutating') },
      webhooks: [mutating('packetmachine', NetworkWebhookPaths.packetMachine, ns), mutating('restricted', RESTRICTED_PATH, restrictedNs)],
    },
  });
  await admission.createValidatingWebhookConfiguration({
    body: {
      metadata: { name: configName('validating') },
      webhooks: [
        {
          name: `machinenetworktemplate.${ns}.network.metal.x-k8s.io`,
          admissionReviewVersions: ['v1'],
          sideEffects: 'None',
          failurePolicy: 'Fail',
          timeoutSeconds: 10,
          clientConfig: { url: url(NetworkWebhookPaths.machineNetworkTemplate), caBundle },
          rules: [
            {
              apiGroups: ['network.metal.x-k8s.io'],
              apiVersions: ['v1alpha1'],
              operations: ['CREATE', 'UPDATE'],
              resources: ['machinenetworktemplates'],
            },
          ],
          namespaceSelector: inNamespace(ns),
        },
      ],
    },
  });
  // The API server picks up new configurations asynchronously: wait until both webhooks act.
  await waitFor(
    'the mutating webhook to be called',
    async () => {
      const probe = await custom.createNamespacedCustomObject({
        ...kinds.packetMachine,
        namespace: ns,
        body: {
          apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
          kind: 'PacketMachine',
          ...packetMachine('probe', { annotations: { [TEMPLATE]: 'x' } }),
        },
        dryRun: 'All',
      });
      return (probe as Obj).metadata.annotations?.[PAUSED] !== undefined;
    },
    { timeoutMs: timeouts.webhookReady },
  );
  await waitFor(
    'the validating webhook to be called',
    async () => {
      try {
        await custom.createNamespacedCustomObject({
          ...kinds.template,
          namespace: ns,
          body: {
            apiVersion: 'network.metal.x-k8s.io/v1alpha1',
            kind: 'MachineNetworkTemplate',
            ...template('probe', [{ name: 'eth1', vlans: [{ vxlan: 1000 }] }]),
          },
          dryRun: 'All',
        });
        return false;
      } catch {
        return true;
      }
    },
    { timeoutMs: timeouts.webhookReady },
  );
});

afterAll(async () => {
  await admission.deleteMutatingWebhookConfiguration({ name: configName('mutating') }).catch(() => undefined);
  await admission.deleteValidatingWebhookConfiguration({ name: configName('validating') }).catch(() => undefined);
  stop.abort();
  await serving;
  client.close();
  nobody.close();
  await deleteTestNamespace(kc, ns);
  await deleteTestNamespace(kc, restrictedNs);
});

describe('PacketMachine webhook', () => {
  const isRecentTime = (value: string | undefined): boolean =>
    value !== undefined && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/.test(value) && Math.abs(Date.parse(value) - Date.now()) < 60_000;

  test('pauses a machine that names a template itself, and marks the pause as ours', async () => {
    const created = await objects.create(kinds.packetMachine, packetMachine('direct', { annotations: { [TEMPLATE]: 'l2' } }));
    expect(created.metadata.annotations?.[PAUSED]).toBe('');
    expect(isRecentTime(created.metadata.annotations?.[HOLD])).toBe(true);
    expect(created.metadata.annotations?.[TEMPLATE]).toBe('l2');
  });

  test('warns when the linked MachineNetworkTemplate does not exist, and holds the machine anyway', async () => {
    const result = await createWithWarnings(kinds.packetMachine, packetMachine('typo', { annotations: { [TEMPLATE]: 'l2-typo' } }));
    expect(result.status).toBe(201);
    expect(result.warnings).toEqual([
      expect.stringContaining(`MachineNetworkTemplate ${ns}/l2-typo not found: the machine stays paused until it exists`),
    ]);
    expect((await objects.get(kinds.packetMachine, 'typo', ns))?.metadata.annotations?.[PAUSED]).toBe('');
  });

  test('pauses a machine cloned from an annotated PacketMachineTemplate (read live, just created)', async () => {
    await objects.create(kinds.packetMachineTemplate, packetMachineTemplate('workers', { [TEMPLATE]: 'l2-workers' }));
    const created = await objects.create(
      kinds.packetMachine,
      packetMachine('workers-abc', {
        annotations: { [FROM_NAME]: 'workers', [FROM_GROUP_KIND]: 'PacketMachineTemplate.infrastructure.cluster.x-k8s.io' },
      }),
    );
    expect(created.metadata.annotations).toEqual({
      [FROM_NAME]: 'workers',
      [FROM_GROUP_KIND]: 'PacketMachineTemplate.infrastructure.cluster.x-k8s.io',
      [PAUSED]: '',
      [HOLD]: expect.any(String),
    });
  });

  test('lets a provisioned machine (clusterctl move, restore) through untouched', async () => {
    const created = await objects.create(
      kinds.packetMachine,
      packetMachine('moved', { annotations: { [TEMPLATE]: 'l2' }, providerID: 'equinixmetal://d-1' }),
    );
    expect(created.metadata.annotations).toEqual({ [TEMPLATE]: 'l2' });
  });

  test('lets an unlinked machine through untouched, also one cloned from a template without the annotation', async () => {
    await objects.create(kinds.packetMachineTemplate, packetMachineTemplate('plain', { unrelated: 'yes' }));
    expect((await objects.create(kinds.packetMachine, packetMachine('unlinked'))).metadata.annotations).toBeUndefined();
    expect(
      (await objects.create(kinds.packetMachine, packetMachine('plain-abc', { annotations: { [FROM_NAME]: 'plain' } }))).metadata
        .annotations,
    ).toEqual({
      [FROM_NAME]: 'plain',
    });
  });

  test('leaves a machine paused by someone else as it is, with a warning', async () => {
    const result = await createWithWarnings(
      kinds.packetMachine,
      packetMachine('paused-elsewhere', { annotations: { [TEMPLATE]: 'l2', [PAUSED]: 'true' } }),
    );
    expect(result.status).toBe(201);
    expect(result.warnings.join('\n')).toContain('will not remove that pause');
    expect((await objects.get(kinds.packetMachine, 'paused-elsewhere', ns))?.metadata.annotations).toEqual({
      [TEMPLATE]: 'l2',
      [PAUSED]: 'true',
    });
  });

  test('answers a dry run the same way and stores nothing', async () => {
    const body = {
      apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
      kind: 'PacketMachine',
      ...packetMachine('dry', { annotations: { [TEMPLATE]: 'l2' } }),
    };
    const created = (await custom.createNamespacedCustomObject({ ...kinds.packetMachine, namespace: ns, body, dryRun: 'All' })) as Obj;
    expect(created.metadata.annotations?.[PAUSED]).toBe('');
    expect(await objects.get(kinds.packetMachine, 'dry', ns)).toBeUndefined();
  });

  test('refuses a machine whose PacketMachineTemplate cannot be read, saying why; needs no read for a direct link', async () => {
    await objects.create(kinds.packetMachineTemplate, packetMachineTemplate('workers', { [TEMPLATE]: 'l2-workers' }, restrictedNs));
    const message = await rejection(
      objects.create(
        kinds.packetMachine,
        packetMachine('workers-xyz', { namespace: restrictedNs, annotations: { [FROM_NAME]: 'workers' } }),
      ),
    );
    expect(message).toContain('admission webhook');
    expect(message).toContain(`reading PacketMachineTemplate ${restrictedNs}/workers failed`);
    expect(message).toContain('forbidden');
    expect(await objects.get(kinds.packetMachine, 'workers-xyz', restrictedNs)).toBeUndefined();
    const direct = await objects.create(
      kinds.packetMachine,
      packetMachine('direct', { namespace: restrictedNs, annotations: { [TEMPLATE]: 'l2' } }),
    );
    expect(direct.metadata.annotations?.[PAUSED]).toBe('');
  });
});

describe('MachineNetworkTemplate schema and CEL rules', () => {
  test.each([
    { name: 'layer2 on an eth port', ports: [{ name: 'eth1', layer2: true }], want: 'layer2 applies to bond ports only' },
    { name: 'an unbonded layer-3 bond', ports: [{ name: 'bond0', bonded: false }], want: 'a layer-3 bond cannot be unbonded' },
    {
      name: 'a native VLAN on a layer-3 bond',
      ports: [{ name: 'bond0', vlans: [{ vxlan: 1000, native: true }, { vxlan: 1001 }] }],
      want: 'a native VLAN needs a layer-2 port',
    },
    {
      name: 'eth0 leaving its bond alone',
      ports: [{ name: 'eth0', bonded: false }],
      want: 'eth0 leaves its bond only with the whole bond',
    },
    {
      name: 'two native VLANs on one port',
      ports: [
        {
          name: 'eth1',
          bonded: false,
          vlans: [
            { vxlan: 1000, native: true },
            { vxlan: 1001, native: true },
          ],
        },
      ],
      want: 'at most one VLAN per port may be native',
    },
    {
      name: 'a native VLAN alone on its port',
      ports: [{ name: 'eth1', bonded: false, vlans: [{ vxlan: 1000, native: true }] }],
      want: 'a native VLAN needs at least one other (tagged) VLAN',
    },
    {
      name: 'a route destination that is no CIDR',
      ports: [{ name: 'bond0', vlans: [{ vxlan: 1000, routes: [{ to: '10.0.0.1', via: '10.0.0.254' }] }] }],
      want: "must be a CIDR or 'default'",
    },
    {
      name: 'a next hop that is no address',
      ports: [{ name: 'bond0', vlans: [{ vxlan: 1000, routes: [{ to: 'default', via: 'gateway' }] }] }],
      want: 'must be an IP address',
    },
    {
      name: 'a route mixing address families',
      ports: [{ name: 'bond0', vlans: [{ vxlan: 1000, routes: [{ to: 'fd00::/64', via: '10.0.0.1' }] }] }],
      want: 'the destination and the next hop must be of the same address family',
    },
    {
      name: 'a nameserver that is no address',
      ports: [{ name: 'bond0', vlans: [{ vxlan: 1000, nameservers: { addresses: ['dns.example'] } }] }],
      want: 'must be an IP address',
    },
    { name: 'a port name Metal does not use', ports: [{ name: 'enp1s0' }], want: 'spec.ports[0].name' },
    { name: 'an MTU below 1280', ports: [{ name: 'bond0', vlans: [{ vxlan: 1000, mtu: 1000 }] }], want: 'spec.ports[0].vlans[0].mtu' },
    { name: 'a vxlan twice on one port', ports: [{ name: 'bond0', vlans: [{ vxlan: 1000 }, { vxlan: 1000 }] }], want: 'Duplicate value' },
    { name: 'a port twice', ports: [{ name: 'bond0' }, { name: 'bond0' }], want: 'Duplicate value' },
  ])('refuses $name', async ({ ports, want }) => {
    const message = await rejection(objects.create(kinds.template, template('bad', ports)));
    expect(message).not.toContain('admission webhook');
    expect(message).toContain(want);
  });

  test('the spec is immutable; metadata may change', async () => {
    await objects.create(kinds.template, template('fixed', [{ name: 'bond0', vlans: [{ vxlan: 1000, addressesFromPools: [pool] }] }]));
    const message = await rejection(
      objects.patch(kinds.template, 'fixed', ns, { spec: { ports: [{ name: 'bond0', vlans: [{ vxlan: 1001 }] }] } }),
    );
    expect(message).toContain('spec is immutable: create a new MachineNetworkTemplate');
    const labelled = await objects.patch(kinds.template, 'fixed', ns, { metadata: { labels: { team: 'a' } } });
    expect(labelled.metadata.labels).toEqual({ team: 'a' });
  });
});

describe('MachineNetworkTemplate webhook', () => {
  test.each([
    {
      name: 'VLANs on eth1 while it stays in bond0',
      ports: [{ name: 'eth1', vlans: [{ vxlan: 1000 }] }],
      want: 'spec.ports[0].vlans: eth1 stays in bond0',
    },
    {
      name: 'VLANs on bond0 in layer2-individual',
      ports: [{ name: 'bond0', layer2: true, bonded: false, vlans: [{ vxlan: 1000 }] }],
      want: 'spec.ports[0].vlans: bond0 is disbonded (layer2-individual',
    },
    {
      name: 'eth1 leaving a bond0 that stays bonded in layer 2',
      ports: [
        { name: 'bond0', layer2: true, vlans: [{ vxlan: 1000 }] },
        { name: 'eth1', bonded: false, vlans: [{ vxlan: 1001 }] },
      ],
      want: 'spec.ports[1].bonded: eth1 leaves bond0 while bond0 stays bonded in layer 2',
    },
    {
      name: 'two IPv4 default routes',
      ports: [
        { name: 'bond0', vlans: [{ vxlan: 1000, routes: [{ to: 'default', via: '10.0.0.1' }] }] },
        { name: 'eth1', bonded: false, vlans: [{ vxlan: 1001, routes: [{ to: 'default', via: '10.1.0.1' }] }] },
      ],
      want: 'spec.ports[1].vlans[0].routes[0].to: a second IPv4 default route',
    },
    {
      name: 'eth1 bonded to a disbonded bond0 (the port planner)',
      ports: [
        { name: 'bond0', layer2: true, bonded: false },
        { name: 'eth1', bonded: true },
      ],
      want: 'spec.ports[1].bonded: eth1 cannot be bonded: it belongs to bond0, which is disbonded (BondedPortWithoutBond)',
    },
    {
      name: 'a port no server has',
      ports: [{ name: 'bond0' }, { name: 'eth7' }],
      want: 'spec.ports[1].name: no Metal server has a port eth7',
    },
  ])('refuses $name', async ({ ports, want }) => {
    const message = await rejection(objects.create(kinds.template, template('bad', ports)));
    expect(message).toContain('admission webhook');
    expect(message).toContain(`MachineNetworkTemplate ${ns}/bad is invalid`);
    expect(message).toContain(want);
  });

  test('accepts each network type', async () => {
    const valid: Record<string, unknown[]> = {
      'hybrid-bonded': [
        {
          name: 'bond0',
          vlans: [
            { vxlan: 1000, addressesFromPools: [pool], routes: [{ to: '10.60.0.0/16', via: '192.168.10.1', metric: 100 }], mtu: 9000 },
          ],
        },
      ],
      hybrid: [
        {
          name: 'eth1',
          bonded: false,
          vlans: [
            { vxlan: 1000, addressesFromPools: [pool, pool] },
            { vxlan: 1001, native: true },
          ],
        },
      ],
      'layer2-bonded': [
        {
          name: 'bond0',
          layer2: true,
          vlans: [
            {
              vxlan: 1000,
              routes: [
                { to: 'default', via: '192.168.10.1' },
                { to: 'default', via: 'fd00::1' },
              ],
            },
          ],
        },
      ],
      'layer2-individual': [
        { name: 'bond0', layer2: true, bonded: false },
        { name: 'eth0', vlans: [{ vxlan: 1000 }] },
        { name: 'eth1', vlans: [{ vxlan: 1001 }] },
      ],
    };
    for (const [name, ports] of Object.entries(valid)) {
      await objects.create(kinds.template, template(name, ports));
    }
    expect((await objects.list(kinds.template, ns)).map((t) => t.metadata.name)).toEqual(expect.arrayContaining(Object.keys(valid)));
  });

  test('accepts a 4-port template with a warning for each 4-port name', async () => {
    const result = await createWithWarnings(
      kinds.template,
      template('four-port', [{ name: 'bond1', layer2: true, vlans: [{ vxlan: 1000 }] }, { name: 'eth3' }]),
    );
    expect(result.status).toBe(201);
    expect(result.warnings).toHaveLength(2);
    expect(result.warnings.join('\n')).toContain('port bond1 exists on 4-port servers only');
    expect(result.warnings.join('\n')).toContain('port eth3 exists on 4-port servers only');
  });
});
