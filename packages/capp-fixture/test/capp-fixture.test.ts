import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as k8s from '@kubernetes/client-node';
import { createLogger } from '@metal-l2/kube';
import type { OwnedControlPlane } from '@metal-l2/local-control-plane';
import { startSimulator, type Simulator } from '@metal-l2/metal-sim';
import { createTestNamespace, loadKubeConfig } from '@metal-l2/test-support/cluster';
import { expectNoContractViolations, loadContract } from '@metal-l2/test-support/contract';
import { installCrds, upstreamCrds } from '@metal-l2/test-support/crds';
import { Objects, type Kind, type Obj } from '@metal-l2/test-support/objects';
import { startPrivateControlPlane, stopPrivateControlPlane } from '@metal-l2/test-support/test-control-planes';
import { timeouts } from '@metal-l2/test-support/timeouts';
import { staysTrue, waitFor } from '@metal-l2/test-support/wait-for';
import { createMetalClient, type IPReservation, type MetalClient } from '@metal-l2/metal-api';
import { enableProjectBgp, startCappFixture, type RunningCappFixture } from '../src/index.js';

// The CAPP fixture against a CAPP-era management cluster (CAPI v1.7.9 and CAPP CRDs, on a private
// control plane: the shared one serves CAPI v1.14) and the Metal simulator: the pause holds, the
// v1.7 owner-reference gap shows (unpausing alone wakes nobody), a Machine event closes it, and the
// device gets the bootstrap data after real Go templating.
const PROJECT_ID = '5d4b3c2a-1f0e-4d9c-8b7a-6f5e4d3c2b1a';
const TOKEN = 'tok-capp-fixture-3c9d1e7f-do-not-leak';
const kinds = {
  machine: { group: 'cluster.x-k8s.io', version: 'v1beta1', plural: 'machines', kind: 'Machine', namespaced: true },
  cluster: { group: 'cluster.x-k8s.io', version: 'v1beta1', plural: 'clusters', kind: 'Cluster', namespaced: true },
  packetMachine: {
    group: 'infrastructure.cluster.x-k8s.io',
    version: 'v1beta1',
    plural: 'packetmachines',
    kind: 'PacketMachine',
    namespaced: true,
  },
  packetCluster: {
    group: 'infrastructure.cluster.x-k8s.io',
    version: 'v1beta1',
    plural: 'packetclusters',
    kind: 'PacketCluster',
    namespaced: true,
  },
} as const satisfies Record<string, Kind>;
const PAUSED = 'cluster.x-k8s.io/paused';
const FINALIZER = 'packetmachine.infrastructure.cluster.x-k8s.io';

/** Bootstrap data as CAPP's own cluster template relies on it: both template layers. */
const USER_DATA = [
  '## template: jinja',
  '#cloud-config',
  'runcmd:',
  '- MINOR_KUBERNETES_VERSION=$(echo {{ .kubernetesVersion }} | cut -d. -f2)',
  '- echo "provider-id: equinixmetal://{{ `{{ v1.instance_id }}` }}"',
  '- echo "{{ .apiKey }}"',
  '',
].join('\n');

let plane: OwnedControlPlane | undefined;
let kc: k8s.KubeConfig;
let objects: Objects;
let core: k8s.CoreV1Api;
let sim: Simulator;
let fixture: RunningCappFixture | undefined;
/** A second CAPP only (no Machine controller part), in its own namespace: nothing sets the cluster label there. */
let bareCapp: RunningCappFixture | undefined;
let bareNs = '';
let metal: MetalClient;
/** The cluster's endpoint reservation, as CAPP's PacketCluster controller reserves it (CreateIP). */
let endpoint: IPReservation;
let ns = '';
const logLines: string[] = [];

beforeAll(async () => {
  plane = await startPrivateControlPlane('capp-fixture');
  kc = loadKubeConfig(plane.state.kubeconfig);
  objects = new Objects(kc);
  core = kc.makeApiClient(k8s.CoreV1Api);
  await installCrds(kc, [...(await upstreamCrds('capiV1_7')), ...(await upstreamCrds('capp'))]);
  ns = await createTestNamespace(kc, 'capp-fixture');
  sim = await startSimulator({
    seed: 'capp-fixture',
    seedConfig: {
      metros: [{ code: 'da' }],
      plans: [{ slug: 'c3.small.x86', ports: 2 }],
      projects: [{ name: 'capi', id: PROJECT_ID }],
      tokens: [{ token: TOKEN }],
    },
    delays: { deviceQueuedMs: 100, deviceProvisioningMs: 300, batchQueuedMs: 50, batchInProgressMs: 50 },
    ...(await loadContract()),
  });
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, callback): void {
      logLines.push(String(chunk));
      callback();
    },
  });
  fixture = await startCappFixture({
    kubeConfig: kc,
    metal: { baseUrl: sim.baseUrl, token: TOKEN, rateLimit: false },
    namespace: ns,
    logger: createLogger({ level: 'debug', stream }),
    pollIntervalMs: 200,
    vipRetryIntervalMs: 300,
  });
  bareNs = await createTestNamespace(kc, 'capp-bare');
  bareCapp = await startCappFixture({
    kubeConfig: kc,
    metal: { baseUrl: sim.baseUrl, token: TOKEN, rateLimit: false },
    namespace: bareNs,
    logger: createLogger({ level: 'debug', stream }),
    playMachineController: false,
    pollIntervalMs: 200,
  });
  metal = createMetalClient({ token: TOKEN, baseUrl: sim.baseUrl, rateLimit: false });
  endpoint = (await metal.ipReservations.create(PROJECT_ID, {
    type: 'public_ipv4',
    quantity: 1,
    metro: 'da',
    fail_on_approval_required: true,
    tags: ['cluster-api-provider-packet:cluster-id:c1'],
  })) as IPReservation;
  await objects.create(kinds.packetCluster, {
    metadata: { name: 'c1', namespace: ns },
    spec: { projectID: PROJECT_ID, metro: 'da', vipManager: 'CPEM' },
  });
  await objects.create(kinds.cluster, {
    metadata: { name: 'c1', namespace: ns },
    spec: { infrastructureRef: { apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1', kind: 'PacketCluster', name: 'c1' } },
  });
  // Nothing plays the Cluster controller: the test reports the infrastructure ready itself.
  const custom = kc.makeApiClient(k8s.CustomObjectsApi);
  await custom.patchNamespacedCustomObjectStatus(
    { ...kinds.cluster, namespace: ns, name: 'c1', body: { status: { infrastructureReady: true } } },
    k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
  );
});

afterAll(async () => {
  await fixture?.stop();
  await bareCapp?.stop();
  await sim.contract?.close();
  await sim.close();
  await stopPrivateControlPlane(plane);
  expect(logLines.join('')).not.toContain(TOKEN);
  // What CAPP sends outside the spec, on purpose here.
  expectNoContractViolations(sim.contract, {
    waive: [
      {
        why: 'CAPP v0.9.0 sends billing_cycle "" for an unset billingCycle (the spec\'s enum has no empty value)',
        matches: (v) =>
          v.operationId === 'createDevice' && v.direction === 'request' && v.messages.some((m) => m.includes('billing_cycle')),
      },
      {
        why: 'CAPP v0.9.0 sends md5 "" when it enables project BGP (the spec\'s pattern wants 10-20 characters)',
        matches: (v) => v.operationId === 'requestBgpConfig' && v.direction === 'request' && v.messages.every((m) => m.includes('/md5')),
      },
    ],
  });
});

async function createMachine(
  name: string,
  options: { userData: string; paused?: boolean; controlPlane?: boolean; cluster?: string; billingCycle?: string | null },
): Promise<void> {
  const clusterName = options.cluster ?? 'c1';
  await core.createNamespacedSecret({
    namespace: ns,
    body: {
      metadata: { name: `${name}-bootstrap` },
      type: 'cluster.x-k8s.io/secret',
      data: { value: Buffer.from(options.userData).toString('base64'), format: Buffer.from('cloud-config').toString('base64') },
    },
  });
  await objects.create(kinds.packetMachine, {
    metadata: {
      name,
      namespace: ns,
      labels: { 'cluster.x-k8s.io/cluster-name': clusterName },
      ...(options.paused === true ? { annotations: { [PAUSED]: '' } } : {}),
    },
    spec: {
      machineType: 'c3.small.x86',
      os: 'ubuntu_22_04',
      ...(options.billingCycle === null ? {} : { billingCycle: options.billingCycle ?? 'hourly' }),
      tags: ['from-spec'],
    },
  });
  await objects.create(kinds.machine, {
    metadata: {
      name,
      namespace: ns,
      labels: {
        'cluster.x-k8s.io/cluster-name': clusterName,
        ...(options.controlPlane === true ? { 'cluster.x-k8s.io/control-plane': '' } : {}),
      },
    },
    spec: {
      clusterName,
      version: 'v1.30.1',
      bootstrap: { dataSecretName: `${name}-bootstrap` },
      infrastructureRef: { apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1', kind: 'PacketMachine', name },
    },
  });
}

async function packetMachine(name: string): Promise<Obj> {
  const pm = await objects.get(kinds.packetMachine, name, ns);
  if (pm === undefined) throw new Error(`PacketMachine ${ns}/${name} is gone`);
  return pm;
}

function devicesNamed(hostname: string): { id: string; userdata: string; tags: string[]; state: string }[] {
  return [...sim.store.devices.values()].filter((d) => d.hostname === hostname);
}

function isLogOf(line: string, name: string, message: string): boolean {
  return line.includes(message) && line.includes(`"name":"${name}"`);
}

function logged(message: string, name: string): boolean {
  return logLines.some((line) => isLogOf(line, name, message));
}

function machineOwners(pm: Obj): object[] {
  return (pm.metadata.ownerReferences ?? []).filter((ref) => (ref as { kind?: string }).kind === 'Machine');
}

describe('a machine held by the pause', () => {
  test('a paused PacketMachine gets no owner reference, no finalizer and no device', async () => {
    await createMachine('held', { userData: USER_DATA, paused: true });
    // The Machine controller part saw the Machine and stopped at the pause, as v1.7 does.
    await waitFor(
      'the Machine controller stopping at the paused PacketMachine',
      () => logged('External object referenced is paused', 'held'),
      {
        timeoutMs: timeouts.watchEvent,
      },
    );
    const pm = await packetMachine('held');
    expect(machineOwners(pm)).toEqual([]);
    expect(pm.metadata.finalizers ?? []).toEqual([]);
    expect(devicesNamed('held')).toEqual([]);
  });

  test('unpausing alone wakes CAPP, which finds no owner Machine, and nothing is created while no Machine event happens', async () => {
    await objects.patch(kinds.packetMachine, 'held', ns, { metadata: { annotations: { [PAUSED]: null } } });
    await waitFor('CAPP looking at the unpaused PacketMachine', () => logged('Machine Controller has not yet set OwnerRef', 'held'), {
      timeoutMs: timeouts.watchEvent,
    });
    await staysTrue(
      'no owner reference, finalizer or device for the unpaused PacketMachine',
      async () => {
        const pm = await packetMachine('held');
        return machineOwners(pm).length === 0 && (pm.metadata.finalizers ?? []).length === 0 && devicesNamed('held').length === 0;
      },
      timeouts.nothingHappens,
    );
  });

  test('touching the Machine sets the owner reference; CAPP creates the device with the Go-templated bootstrap data and reports it ready', async () => {
    const machine = await objects.patch(kinds.machine, 'held', ns, { metadata: { annotations: { 'network.metal.x-k8s.io/poke': '1' } } });
    const ready = await waitFor(
      'PacketMachine held ready',
      async () => {
        const pm = await packetMachine('held');
        return pm.status?.ready === true ? pm : undefined;
      },
      { timeoutMs: timeouts.deviceReady },
    );
    expect(machineOwners(ready)).toEqual([
      {
        apiVersion: 'cluster.x-k8s.io/v1beta1',
        kind: 'Machine',
        name: 'held',
        uid: machine.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    expect(ready.metadata.finalizers).toEqual([FINALIZER]);

    const devices = devicesNamed('held');
    expect(devices).toHaveLength(1);
    const device = devices[0]!;
    // Go templating happened: the version filled in, the raw string left for cloud-init's Jinja,
    // and a worker gets no apiKey (a missing key renders "<no value>").
    expect(device.userdata).toBe(
      [
        '## template: jinja',
        '#cloud-config',
        'runcmd:',
        '- MINOR_KUBERNETES_VERSION=$(echo v1.30.1 | cut -d. -f2)',
        '- echo "provider-id: equinixmetal://{{ v1.instance_id }}"',
        '- echo "<no value>"',
        '',
      ].join('\n'),
    );
    // CAPP's tags; spec.tags are lost to v0.9.0's copy into a zero-length slice.
    expect(device.tags).toEqual([`capp:cluster-id:c1`, `capp:machine-uid:held`, `capp:namespace:${ns}`, 'kubernetes.io/role:node']);
    expect(device.state).toBe('active');

    expect(ready.spec.providerID).toBe(`equinixmetal://${device.id}`);
    expect(ready.status.instanceStatus).toBe('active');
    expect(ready.status.addresses).toEqual(
      expect.arrayContaining([expect.objectContaining({ type: 'ExternalIP' }), expect.objectContaining({ type: 'InternalIP' })]),
    );
    const conditions = (ready.status.conditions as { type: string; status: string }[]).map((c) => ({ type: c.type, status: c.status }));
    expect(conditions).toEqual([
      { type: 'Ready', status: 'True' },
      { type: 'InstanceReady', status: 'True' },
    ]);

    // The providerID (spec) and infrastructureReady (the status subresource) are two writes: wait for both.
    const copied = await waitFor(
      'Machine held with the providerID and infrastructureReady',
      async () => {
        const m = await objects.get(kinds.machine, 'held', ns);
        return m?.spec.providerID === `equinixmetal://${device.id}` && m.status?.infrastructureReady === true ? m : undefined;
      },
      { timeoutMs: timeouts.watchEvent },
    );
    expect(copied.spec.providerID).toBe(`equinixmetal://${device.id}`);
    // One list (no device by tags yet), one create, then reads of the device until it is active.
    const calls = sim.requests.countByOperation({ deviceId: device.id });
    expect(calls['createDevice']).toBe(1);
  });

  test('deleting the PacketMachine deletes the device, then CAPP lets the object go', async () => {
    const [device] = devicesNamed('held');
    await objects.delete(kinds.packetMachine, 'held', ns);
    await waitFor('PacketMachine held gone', async () => (await objects.get(kinds.packetMachine, 'held', ns)) === undefined, {
      timeoutMs: timeouts.deviceReady,
    });
    // CAPP does not wait for the device to go: it is deprovisioning now, and gone a while later.
    expect(devicesNamed('held').map((d) => d.state)).toEqual(['deprovisioning']);
    await waitFor('device held gone after deprovisioning', () => devicesNamed('held').length === 0, {
      timeoutMs: timeouts.deviceReady,
    });
    // One delete; a reconcile already queued may try again while the device deprovisions, and that
    // is refused (422), as the simulator refuses deleting a device twice.
    const deletes = sim.requests.entries({ operationId: 'deleteDevice', deviceId: device!.id });
    expect(deletes[0]?.status).toBe(204);
    expect(deletes.slice(1).map((e) => [e.status, e.rule])).toEqual(deletes.slice(1).map(() => [422, 'device-delete-state']));
  });
});

describe('templating', () => {
  test('a template that does not parse fails the machine with CreateMachineError and creates no device', async () => {
    await createMachine('broken', { userData: '#cloud-config\nruncmd:\n- echo {{ .kubernetesVersion \n' });
    const failed = await waitFor(
      'PacketMachine broken failed',
      async () => {
        const pm = await packetMachine('broken');
        return pm.status?.failureReason === undefined ? undefined : pm;
      },
      { timeoutMs: timeouts.deviceReady },
    );
    expect(failed.status.failureReason).toBe('CreateMachineError');
    expect(failed.status.failureMessage).toMatch(
      /^failed to create machine broken: error parsing userdata template: template: user-data:\d+: unclosed action/,
    );
    const instanceReady = (failed.status.conditions as { type: string }[]).find((c) => c.type === 'InstanceReady');
    expect(instanceReady).toMatchObject({ status: 'False', reason: 'InstanceProvisionFailed', severity: 'Error' });
    expect(devicesNamed('broken')).toEqual([]);
    // CAPI v1.7 copies the failure to the Machine (a MachineHealthCheck would remediate it).
    await waitFor(
      'Machine broken with the failure',
      async () => (await objects.get(kinds.machine, 'broken', ns))?.status?.failureReason === 'CreateMachineError',
      {
        timeoutMs: timeouts.watchEvent,
      },
    );
  });

  test('a CPEM control plane gets the token and the cluster reservation as endpoint, then the reservation is assigned to it once active', async () => {
    // CAPP reads the endpoint from the tagged reservation, not from PacketCluster.spec (which the
    // PacketCluster controller fills from the same reservation): a different host here shows which.
    await objects.patch(kinds.packetCluster, 'c1', ns, { spec: { controlPlaneEndpoint: { host: '147.75.10.10', port: 6443 } } });
    await createMachine('cp', { userData: 'endpoint={{ .controlPlaneEndpoint }} key={{ .apiKey }}', controlPlane: true });
    const device = await waitFor('device cp', () => devicesNamed('cp')[0], { timeoutMs: timeouts.deviceReady });
    expect(device.userdata).toBe(`endpoint=${endpoint.address ?? ''} key=${TOKEN}`);
    expect(device.tags).toContain('kubernetes.io/role:master');

    const ready = await waitFor(
      'PacketMachine cp ready',
      async () => ((await packetMachine('cp')).status?.ready === true ? true : undefined),
      {
        timeoutMs: timeouts.deviceReady,
      },
    );
    expect(ready).toBe(true);
    const assigned = await metal.devices.get(device.id);
    expect((assigned.ip_addresses ?? []).map((a) => a.address)).toContain(endpoint.address);
    expect(sim.requests.entries({ operationId: 'createIPAssignment', deviceId: device.id }).map((e) => e.status)).toEqual([201]);
  });

  test('a CPEM worker looks the reservation up once active but gets no assignment; the reservation stays with the control plane', async () => {
    await createMachine('wk', { userData: '#cloud-config\n' });
    await waitFor('PacketMachine wk ready', async () => (await packetMachine('wk')).status?.ready === true, {
      timeoutMs: timeouts.deviceReady,
    });
    const [device] = devicesNamed('wk');
    expect(sim.requests.entries({ operationId: 'createIPAssignment', deviceId: device!.id })).toEqual([]);
    const reservation = (await metal.ipReservations.get(endpoint.id ?? '')) as IPReservation;
    expect(reservation.assignments).toHaveLength(1);
  });
});

describe('a device that already exists', () => {
  test('is adopted by its tags rather than created twice', async () => {
    const metal = (await import('@metal-l2/metal-api')).createMetalClient({ token: TOKEN, baseUrl: sim.baseUrl, rateLimit: false });
    const existing = await metal.devices.create(PROJECT_ID, {
      hostname: 'adopted',
      metro: 'da',
      plan: 'c3.small.x86',
      operating_system: 'ubuntu_22_04',
      tags: ['capp:cluster-id:c1', 'capp:machine-uid:adopted', `capp:namespace:${ns}`, 'kubernetes.io/role:node'],
    });
    await createMachine('adopted', { userData: '#cloud-config\n' });
    const ready = await waitFor(
      'PacketMachine adopted ready',
      async () => {
        const pm = await packetMachine('adopted');
        return pm.status?.ready === true ? pm : undefined;
      },
      { timeoutMs: timeouts.deviceReady },
    );
    expect(ready.spec.providerID).toBe(`equinixmetal://${existing.id ?? ''}`);
    expect(devicesNamed('adopted')).toHaveLength(1);
  });
});

describe('a Machine without the cluster-name label', () => {
  test('is an error CAPP retries (no finalizer meanwhile), and the label arriving lets it proceed', async () => {
    const machine = await objects.create(kinds.machine, {
      metadata: { name: 'nolabel', namespace: bareNs },
      spec: {
        clusterName: 'c1',
        bootstrap: { dataSecretName: 'nolabel-bootstrap' },
        infrastructureRef: { apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1', kind: 'PacketMachine', name: 'nolabel' },
      },
    });
    // No Machine controller runs in this namespace: the owner reference is set by hand, as CAPI would.
    await objects.create(kinds.packetMachine, {
      metadata: {
        name: 'nolabel',
        namespace: bareNs,
        ownerReferences: [
          { apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'Machine', name: 'nolabel', uid: machine.metadata.uid ?? '', controller: true },
        ],
      },
      spec: { machineType: 'c3.small.x86', os: 'ubuntu_22_04', billingCycle: 'hourly' },
    });
    const missingLabel = (line: string): boolean =>
      line.includes('"name":"nolabel"') &&
      line.includes('reconcile failed') &&
      line.includes('no \\"cluster.x-k8s.io/cluster-name\\" label present');
    // Retried: the same failure at least twice, not a single "please associate" and silence.
    await waitFor('CAPP retrying the unlabelled Machine', () => logLines.filter(missingLabel).length >= 2, {
      timeoutMs: timeouts.watchEvent,
    });
    expect((await objects.get(kinds.packetMachine, 'nolabel', bareNs))?.metadata.finalizers ?? []).toEqual([]);

    // The label names a Cluster that does not exist here: CAPP gets past the label and fails on the Cluster.
    await objects.patch(kinds.machine, 'nolabel', bareNs, { metadata: { labels: { 'cluster.x-k8s.io/cluster-name': 'c1' } } });
    await waitFor(
      'CAPP looking for the Cluster the label names',
      () => logLines.some((line) => line.includes('"name":"nolabel"') && line.includes('cluster does not exist: cluster')),
      { timeoutMs: timeouts.watchEvent },
    );
  });
});

describe('what CAPP sends when the PacketMachine leaves fields empty', () => {
  test('an unset billingCycle goes out as billing_cycle "", which the spec (and so the simulator) refuses: CreateMachineError', async () => {
    await createMachine('nobilling', { userData: '#cloud-config\n', billingCycle: null });
    const failed = await waitFor(
      'PacketMachine nobilling failed',
      async () => {
        const pm = await packetMachine('nobilling');
        return pm.status?.failureReason === undefined ? undefined : pm;
      },
      { timeoutMs: timeouts.deviceReady },
    );
    expect(failed.status.failureReason).toBe('CreateMachineError');
    expect(failed.status.failureMessage).toMatch(/^failed to create machine nobilling: createDevice .* answered HTTP 422: .*billing_cycle/);
    expect(devicesNamed('nobilling')).toEqual([]);
    // Each refused create is one reconcile that read the PacketMachine before its own failureReason
    // reached CAPP's cache: controller-runtime requeues a failed reconcile after 5 ms, and the status
    // write that records the failure also wakes one, so how many come first depends on the watch's
    // lag (once or twice here, more on a loaded machine). Exactly one create per such reconcile, and
    // none once a reconcile has seen the failure: it skips the machine.
    const refusedCreates = (): number => sim.requests.entries({ operationId: 'createDevice', status: 422 }).length;
    const failedReconciles = (): number =>
      logLines.filter((l) => isLogOf(l, 'nobilling', 'reconcile failed') && l.includes('billing_cycle')).length;
    const skips = (): number => logLines.filter((l) => isLogOf(l, 'nobilling', 'Error state detected, skipping reconciliation')).length;
    await waitFor('CAPP skipping the failed PacketMachine nobilling', () => skips() > 0, { timeoutMs: timeouts.watchEvent });
    const refused = refusedCreates();
    expect(refused).toBeGreaterThanOrEqual(1);
    expect(failedReconciles()).toBe(refused);
    // A later event (an annotation) wakes CAPP again: it skips the failed machine, no create.
    const skipped = skips();
    await objects.patch(kinds.packetMachine, 'nobilling', ns, { metadata: { annotations: { 'metal-l2.test/poke': '1' } } });
    await waitFor('CAPP skipping nobilling again after the poke', () => skips() > skipped, { timeoutMs: timeouts.watchEvent });
    expect(refusedCreates()).toBe(refused);
  });
});

describe('a KUBE_VIP cluster', () => {
  test('every machine asks for a BGP session on its device: refused while the project has no BGP (retried, not ready), then one session and the machine is ready', async () => {
    await objects.create(kinds.packetCluster, {
      metadata: { name: 'kv', namespace: ns },
      spec: { projectID: PROJECT_ID, metro: 'da', vipManager: 'KUBE_VIP' },
    });
    await objects.create(kinds.cluster, {
      metadata: { name: 'kv', namespace: ns },
      spec: { infrastructureRef: { apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1', kind: 'PacketCluster', name: 'kv' } },
    });
    await kc
      .makeApiClient(k8s.CustomObjectsApi)
      .patchNamespacedCustomObjectStatus(
        { ...kinds.cluster, namespace: ns, name: 'kv', body: { status: { infrastructureReady: true } } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      );
    await createMachine('kv-0', { userData: '#cloud-config\n', cluster: 'kv' });
    const device = await waitFor('device kv-0', () => devicesNamed('kv-0')[0], { timeoutMs: timeouts.deviceReady });
    const bgpCalls = (): { status: number; rule: string | undefined }[] =>
      sim.requests.entries({ operationId: 'createBgpSession', deviceId: device.id });
    // The PacketCluster controller (not played) would have enabled BGP on the project first; until
    // then Metal refuses every session and CAPP retries the error.
    await waitFor('CAPP asking for the BGP session again', () => bgpCalls().length >= 2, { timeoutMs: timeouts.deviceReady });
    expect(bgpCalls().every((e) => e.status === 422 && e.rule === 'bgp-session-needs-project-bgp')).toBe(true);
    const waiting = await packetMachine('kv-0');
    // providerID and instanceStatus are written before the BGP step; addresses and ready after it.
    expect(waiting.spec.providerID).toBe(`equinixmetal://${device.id}`);
    expect(waiting.status?.ready).not.toBe(true);
    expect(waiting.status?.addresses ?? []).toEqual([]);

    await enableProjectBgp(metal, PROJECT_ID);
    const ready = await waitFor(
      'kv-0 ready',
      async () => {
        const pm = await packetMachine('kv-0');
        return pm.status?.ready === true ? pm : undefined;
      },
      { timeoutMs: timeouts.deviceReady },
    );
    expect(ready.status?.addresses ?? []).not.toEqual([]);
    const created = bgpCalls().filter((e) => e.status === 201);
    expect(created).toHaveLength(1);
    // Every later reconcile asks again; "already has session" counts as done. The write of the ready
    // status wakes the next one, which may come after ready was read here: wait for its call.
    const afterCreate = (): { status: number; rule: string | undefined }[] =>
      bgpCalls().slice(bgpCalls().findIndex((e) => e.status === 201) + 1);
    await waitFor('CAPP asking for the BGP session again once it exists', () => afterCreate().length > 0, {
      timeoutMs: timeouts.watchEvent,
    });
    expect(afterCreate().every((e) => e.status === 422 && e.rule === 'bgp-session-one-per-family')).toBe(true);
    expect(bgpCalls().filter((e) => e.status === 201)).toHaveLength(1);
    expect(sim.store.devices.get(device.id)?.bgpSessions.map((x) => x.addressFamily)).toEqual(['ipv4']);
  });
});

describe('a project with more than one page of devices', () => {
  test('a device CAPP made that is not on the first page of 10 is not found: CAPP creates a duplicate and the first becomes an orphan', async () => {
    const fillers = Math.max(0, 10 - [...sim.store.devices.values()].filter((d) => d.projectId === PROJECT_ID).length);
    for (let i = 0; i < fillers; i += 1) {
      await metal.devices.create(PROJECT_ID, {
        hostname: `filler-${i}`,
        metro: 'da',
        plan: 'c3.small.x86',
        operating_system: 'ubuntu_22_04',
      });
    }
    // As if CAPP had created it and the patch recording its providerID was lost: the same tags.
    const orphan = await metal.devices.create(PROJECT_ID, {
      hostname: 'paged',
      metro: 'da',
      plan: 'c3.small.x86',
      operating_system: 'ubuntu_22_04',
      tags: ['capp:cluster-id:c1', 'capp:machine-uid:paged', `capp:namespace:${ns}`, 'kubernetes.io/role:node'],
    });
    const mark = sim.requests.lastSeq();
    await createMachine('paged', { userData: '#cloud-config\n' });
    const ready = await waitFor(
      'PacketMachine paged ready',
      async () => {
        const pm = await packetMachine('paged');
        return pm.status?.ready === true ? pm : undefined;
      },
      { timeoutMs: timeouts.deviceReady },
    );
    const devices = devicesNamed('paged');
    expect(devices).toHaveLength(2);
    const duplicate = devices.find((d) => d.id !== orphan.id)!;
    expect(ready.spec.providerID).toBe(`equinixmetal://${duplicate.id}`);
    // One bare list (page 1 only), then the create.
    expect(sim.requests.entries({ operationId: 'findProjectDevices', afterSeq: mark }).length).toBeGreaterThanOrEqual(1);
    expect(sim.requests.entries({ operationId: 'createDevice', afterSeq: mark, status: 201 })).toHaveLength(1);
    expect(sim.store.devices.get(orphan.id ?? '')?.state).toBeDefined();
  });
});
