import { beforeAll, describe, expect, test } from '@jest/globals';
import * as k8s from '@kubernetes/client-node';
import { cabpkCloudConfig } from '@metal-l2/capp-fixture';
import type { Obj } from '@metal-l2/test-support/objects';
import { waitFor } from '@metal-l2/test-support/wait-for';
import { eventsOf, kubectlInNamespace } from './support/network-probes.js';
import {
  CLUSTER,
  condition,
  createMachine,
  createMachineOfPacketMachine,
  createPacketMachine,
  createPool,
  createTemplate,
  createVlans,
  machineNetwork,
  netKinds,
  poolRef,
  useNetworkWorld,
  waitMachineNetworkReason,
} from './support/network-world.js';

// The edges of one machine's flow: names as long as Kubernetes allows, a claim or a Secret write
// the API server would refuse, a link to a template that does not exist and its removal with
// kubectl. Each ends in a condition or an annotation a user can read, never a silent wait.

const world = useNetworkWorld('net-edges');

async function claimsOwnedBy(machine: string): Promise<Obj[]> {
  const claims = await world.objects.list(netKinds.claim, world.ns);
  return claims.filter((c) => (c.metadata.ownerReferences ?? []).some((o) => (o as { name?: string }).name === machine));
}

async function waitAddressesAllocated(name: string, timeoutMs = 60_000): Promise<void> {
  await waitFor(
    `MachineNetwork ${name.slice(0, 20)}… to get its addresses`,
    async () => {
      const mn = await machineNetwork(world, name);
      if (condition(mn, 'AddressesAllocated')?.status === 'True') return true;
      throw new Error(mn === undefined ? 'no MachineNetwork' : JSON.stringify(mn.status?.conditions ?? 'no conditions'));
    },
    { timeoutMs, intervalMs: 200 },
  );
}

const PAUSED = 'cluster.x-k8s.io/paused';
const HOLD = 'network.metal.x-k8s.io/hold';
const HOLD_REASON = 'network.metal.x-k8s.io/hold-reason';

beforeAll(async () => {
  await createVlans(world, [1000]);
  await createPool(world, 'edges', 40);
  await createTemplate(world, 'edges', [{ name: 'bond0', vlans: [{ vxlan: 1000, addressesFromPools: [poolRef('edges')] }] }]);
}, 60_000);

describe('long names', () => {
  test('a 69-character PacketMachine name gets its address: the claim label fits in 63 characters', async () => {
    const name = `long-${'a'.repeat(64)}`;
    expect(name).toHaveLength(69);
    await createMachine(world, name, 'edges');
    await waitAddressesAllocated(name);
    const [claim] = await claimsOwnedBy(name);
    const label = claim?.metadata?.labels?.['network.metal.x-k8s.io/machine-network'] ?? '';
    expect(label.length).toBeGreaterThan(0);
    expect(label.length).toBeLessThanOrEqual(63);
  });

  test('a 253-character PacketMachine name gets its address (claim name and label shortened with a hash)', async () => {
    const name = `max-${'b'.repeat(249)}`;
    expect(name).toHaveLength(253);
    await createMachine(world, name, 'edges', { secretName: 'max-bootstrap' });
    await waitAddressesAllocated(name);
    const claims = await claimsOwnedBy(name);
    expect(claims).toHaveLength(1);
    expect(claims[0]?.metadata?.name?.length).toBeLessThanOrEqual(253);
  });

  test('a claim the API server refuses is reported as ClaimRefused with its message, and the machine goes on once allowed', async () => {
    const core = world.kc.makeApiClient(k8s.CoreV1Api);
    const resource = 'count/ipaddressclaims.ipam.cluster.x-k8s.io';
    await core.createNamespacedResourceQuota({
      namespace: world.ns,
      body: { metadata: { name: 'no-claims' }, spec: { hard: { [resource]: '0' } } },
    });
    // Play the quota controller (this control plane runs none): usage computed, none left.
    await core.replaceNamespacedResourceQuotaStatus({
      namespace: world.ns,
      name: 'no-claims',
      body: {
        ...(await core.readNamespacedResourceQuota({ namespace: world.ns, name: 'no-claims' })),
        status: { hard: { [resource]: '0' }, used: { [resource]: '0' } },
      },
    });
    await createMachine(world, 'refused-0', 'edges');
    const mn = await waitMachineNetworkReason(
      world,
      'refused-0',
      { type: 'AddressesAllocated', reason: 'ClaimRefused' },
      { timeoutMs: 30_000 },
    );
    expect(condition(mn, 'AddressesAllocated')?.status).toBe('False');
    expect(condition(mn, 'AddressesAllocated')?.message).toContain('exceeded quota');
    expect(condition(mn, 'Ready')).toMatchObject({ status: 'False', reason: 'ClaimRefused' });

    await core.deleteNamespacedResourceQuota({ namespace: world.ns, name: 'no-claims' });
    await waitAddressesAllocated('refused-0', 90_000);
  }, 180_000);
});

describe('the template link', () => {
  test('a machine linked to a template that does not exist is held and says why on the PacketMachine and in an Event', async () => {
    await createMachine(world, 'typo-0', 'edgse');
    const pm = await waitFor(
      'the hold reason on the PacketMachine',
      async () => {
        const found = await world.objects.get(netKinds.packetMachine, 'typo-0', world.ns);
        return (found?.metadata.annotations?.[HOLD_REASON] ?? '') === '' ? false : found;
      },
      { timeoutMs: 30_000 },
    );
    expect(pm.metadata.annotations?.[HOLD_REASON]).toContain('TemplateNotFound');
    expect(pm.metadata.annotations?.[HOLD_REASON]).toContain('edgse');
    expect(pm.metadata.annotations?.[PAUSED]).toBeDefined();
    const events = eventsOf(world, 'typo-0');
    expect(events.some((e) => e.type === 'Warning' && e.reason === 'TemplateNotFound')).toBe(true);
    expect(await machineNetwork(world, 'typo-0')).toBeUndefined();
  });

  test('removing the link of a held machine with kubectl releases our pause, and CAPP goes on', async () => {
    await createMachine(world, 'typo-1', 'edgse');
    await waitFor('the TemplateNotFound Event', () => eventsOf(world, 'typo-1').some((e) => e.reason === 'TemplateNotFound'), {
      timeoutMs: 30_000,
    });
    await kubectlInNamespace(world, 'annotate', 'packetmachine', 'typo-1', 'network.metal.x-k8s.io/template-');

    const released = await waitFor(
      'the pause to be released',
      async () => {
        const found = await world.objects.get(netKinds.packetMachine, 'typo-1', world.ns);
        const annotations = found?.metadata.annotations ?? {};
        return annotations[PAUSED] === undefined && annotations[HOLD] === undefined ? found : false;
      },
      { timeoutMs: 30_000 },
    );
    expect(released.metadata.annotations?.[HOLD_REASON]).toBeUndefined();
    // The Event is told after the patch that released the pause lands.
    const releasedEvent = await waitFor(
      'the PauseReleased Event',
      () => eventsOf(world, 'typo-1').find((e) => e.reason === 'PauseReleased') ?? false,
      { timeoutMs: 30_000 },
    );
    expect(releasedEvent.message).toContain('no longer linked');
    // Unpaused, CAPP creates the device; no MachineNetwork was ever made for it.
    await waitFor(
      'CAPP to create the device',
      async () => ((await world.objects.get(netKinds.packetMachine, 'typo-1', world.ns))?.spec?.providerID ?? '') !== '',
      { timeoutMs: 60_000 },
    );
    expect(await machineNetwork(world, 'typo-1')).toBeUndefined();
  }, 180_000);
});

describe('a linked machine the webhook did not hold', () => {
  test('a clone admitted without the hold (the webhook did not answer; its namespace did not opt in) is held by the controller with a HeldAfterCreation Warning, and gets its network before CAPP creates it', async () => {
    await world.objects.create(netKinds.packetMachineTemplate, {
      metadata: { name: 'late-pmt', namespace: world.ns, annotations: { 'network.metal.x-k8s.io/template': 'edges' } },
      spec: { template: { spec: { machineType: 'c3.small.x86', os: 'ubuntu_22_04', billingCycle: 'hourly' } } },
    });
    // The chart's webhook for clones in namespaces without the opt-in label is failurePolicy Ignore:
    // down, it admits them untouched. Here the world's webhook stops matching this namespace instead.
    const admission = world.kc.makeApiClient(k8s.AdmissionregistrationV1Api);
    const webhookName = `metal-l2-network-test-${world.ns}`;
    const selector = (value: object): Promise<k8s.V1MutatingWebhookConfiguration> =>
      admission.patchMutatingWebhookConfiguration(
        { name: webhookName, body: [{ op: 'replace', path: '/webhooks/0/namespaceSelector', value }] },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.JsonPatch),
      );
    const original = (await admission.readMutatingWebhookConfiguration({ name: webhookName })).webhooks?.[0]?.namespaceSelector ?? {};
    await selector({ matchLabels: { 'metal-l2.test/never': 'true' } });
    let admitted: Obj | undefined;
    try {
      let attempt = 0;
      // The API server applies the change a moment later: until then the webhook still holds them.
      admitted = await waitFor(
        'a clone admitted without the hold',
        async () => {
          const created = await createPacketMachine(world, `late-${attempt++}`, 'edges', { clonedFrom: 'late-pmt' });
          return created.metadata.annotations?.[PAUSED] === undefined ? created : undefined;
        },
        { timeoutMs: 30_000, intervalMs: 500 },
      );
    } finally {
      await selector(original);
    }
    const name = admitted.metadata.name;
    await waitFor(
      `the controller to hold ${name}`,
      async () => {
        const pm = await world.objects.get(netKinds.packetMachine, name, world.ns);
        if (pm?.metadata.annotations?.[PAUSED] !== undefined && pm.metadata.annotations[HOLD] !== undefined) return true;
        throw new Error(JSON.stringify({ annotations: pm?.metadata.annotations, providerID: pm?.spec?.['providerID'] }));
      },
      { timeoutMs: 30_000 },
    );
    // As with CAPI, the Machine and its bootstrap data come after the PacketMachine (here once it
    // is held: in a MachineSet, CABPK takes seconds to write the data).
    await createMachineOfPacketMachine(world, name);
    const warning = eventsOf(world, name).find((e) => e.reason === 'HeldAfterCreation');
    expect(warning?.type).toBe('Warning');
    expect(warning?.message).toContain(`MachineNetworkTemplate ${world.ns}/edges`);
    expect(warning?.message).toContain('network.metal.x-k8s.io/enabled=true');
    // Then the flow of a held machine: the configuration is in the user data before CAPP creates
    // the server, and our hold goes.
    const mn = await waitMachineNetworkReason(world, name, { type: 'Ready', reason: 'Ready' }, { timeoutMs: 90_000 });
    expect(condition(mn, 'UserDataInjected')?.reason).toBe('Injected');
    const pm = await world.objects.get(netKinds.packetMachine, name, world.ns);
    expect(pm?.metadata.annotations?.[PAUSED]).toBeUndefined();
  }, 180_000);
});

describe('bootstrap Secrets the API server would refuse to write', () => {
  test('a Secret the injection would take over 1 MiB is refused before the patch, with the sizes', async () => {
    // Just under the API server's 1 MiB limit (data values, decoded, summed): our part does not fit.
    const padding = 1024 * 1024 - 400;
    const value = `${cabpkCloudConfig('big-0')}# ${'x'.repeat(padding - cabpkCloudConfig('big-0').length - 3)}\n`;
    await createMachine(world, 'big-0', 'edges', { value });
    const mn = await waitMachineNetworkReason(
      world,
      'big-0',
      { type: 'UserDataInjected', reason: 'BootstrapSecretTooLarge' },
      { timeoutMs: 60_000 },
    );
    expect(condition(mn, 'UserDataInjected')?.message).toContain('1048576');
    const secret = await world.kc.makeApiClient(k8s.CoreV1Api).readNamespacedSecret({ namespace: world.ns, name: 'big-0-bootstrap' });
    expect(Buffer.from(secret.data?.['value'] ?? '', 'base64').toString('utf8')).toBe(value);
    const pm = await world.objects.get(netKinds.packetMachine, 'big-0', world.ns);
    expect(pm?.metadata.annotations?.[PAUSED]).toBeDefined();
  });

  test('an immutable Secret is refused before the patch', async () => {
    const core = world.kc.makeApiClient(k8s.CoreV1Api);
    await core.createNamespacedSecret({
      namespace: world.ns,
      body: {
        metadata: { name: 'frozen-0-bootstrap', labels: { 'cluster.x-k8s.io/cluster-name': CLUSTER } },
        type: 'cluster.x-k8s.io/secret',
        immutable: true,
        stringData: { value: cabpkCloudConfig('frozen-0'), format: 'cloud-config' },
      },
    });
    await createMachine(world, 'frozen-0', 'edges', { skipSecret: true });
    const mn = await waitMachineNetworkReason(
      world,
      'frozen-0',
      { type: 'UserDataInjected', reason: 'BootstrapSecretImmutable' },
      { timeoutMs: 60_000 },
    );
    expect(condition(mn, 'UserDataInjected')?.message).toContain('immutable');
    expect(condition(mn, 'Ready')).toMatchObject({ status: 'False', reason: 'BootstrapSecretImmutable' });
  });

  test("a write an admission policy refuses (as the chart's Secret policy refuses a Secret no bootstrap config owns) is reported as BootstrapSecretRefused with the policy's words; the machine stays held", async () => {
    // A policy of the test's own, on this one Secret: the chart's binds to its ServiceAccount, and
    // this controller runs as the test's user.
    const admission = world.kc.makeApiClient(k8s.AdmissionregistrationV1Api);
    const name = `policed-${world.ns}`;
    const refusal = 'bootstrap data Secrets only, and this one is not';
    await admission.createValidatingAdmissionPolicy({
      body: {
        metadata: { name },
        spec: {
          failurePolicy: 'Fail',
          matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['UPDATE'], resources: ['secrets'] }] },
          matchConditions: [
            {
              name: 'these-secrets',
              expression: `request.namespace == '${world.ns}' && request.name in ['policed-0-bootstrap', 'policy-probe']`,
            },
          ],
          validations: [{ expression: 'false', message: refusal, reason: 'Forbidden' }],
        },
      },
    });
    await admission.createValidatingAdmissionPolicyBinding({
      body: { metadata: { name }, spec: { policyName: name, validationActions: ['Deny'] } },
    });
    try {
      // The policy takes a moment to reach the API server's admission chain.
      const core = world.kc.makeApiClient(k8s.CoreV1Api);
      await core.createNamespacedSecret({ namespace: world.ns, body: { metadata: { name: 'policy-probe' }, stringData: { n: '0' } } });
      await waitFor(
        'the policy to refuse an update',
        async () => {
          try {
            await core.patchNamespacedSecret(
              { namespace: world.ns, name: 'policy-probe', body: { stringData: { n: String(Date.now()) } } },
              k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
            );
            return false;
          } catch (err: unknown) {
            if (err instanceof k8s.ApiException && err.code === 403) return true;
            throw err;
          }
        },
        { timeoutMs: 30_000, intervalMs: 300 },
      );
      await createMachine(world, 'policed-0', 'edges');
      const mn = await waitMachineNetworkReason(
        world,
        'policed-0',
        { type: 'UserDataInjected', reason: 'BootstrapSecretRefused' },
        { timeoutMs: 60_000 },
      );
      expect(condition(mn, 'UserDataInjected')?.message).toContain(refusal);
      expect(condition(mn, 'UserDataInjected')?.message).toContain('policed-0-bootstrap');
      expect(condition(mn, 'Ready')).toMatchObject({ status: 'False', reason: 'BootstrapSecretRefused' });
      expect(eventsOf(world, 'policed-0').find((e) => e.reason === 'InjectionRefused')?.message).toContain(refusal);
      const pm = await world.objects.get(netKinds.packetMachine, 'policed-0', world.ns);
      expect(pm?.metadata.annotations?.[PAUSED]).toBeDefined();
    } finally {
      await admission.deleteValidatingAdmissionPolicyBinding({ name });
      await admission.deleteValidatingAdmissionPolicy({ name });
    }
  });
});
