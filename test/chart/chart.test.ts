import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as k8s from '@kubernetes/client-node';
import { parseAllDocuments, parseDocument } from 'yaml';
import { cabpkCloudConfig, type RunningCappFixture } from '@metal-l2/capp-fixture';
import { freePort, renderKubeconfig, type OwnedControlPlane } from '@metal-l2/local-control-plane';
import { startSimulator, type Simulator } from '@metal-l2/metal-sim';
import {
  CLUSTER,
  condition,
  CREDENTIALS_SECRET as CREDENTIALS,
  METRO,
  netKinds,
  PROJECT_ID,
  startCappForWorkloadCluster,
  vrfBackedPool,
} from '../e2e/support/network-world.js';
import { makeServingCertificate } from '@metal-l2/test-support/certificates';
import { createTestNamespace, loadKubeConfig } from '@metal-l2/test-support/cluster';
import { installCrds, machineHealthCheckStandIn, upstreamCrds } from '@metal-l2/test-support/crds';
import { Objects, kinds, type Kind, type Obj } from '@metal-l2/test-support/objects';
import { repoRoot } from '@metal-l2/test-support/paths';
import { startPrivateControlPlane, stopPrivateControlPlane } from '@metal-l2/test-support/test-control-planes';
import { timeouts } from '@metal-l2/test-support/timeouts';
import { waitFor } from '@metal-l2/test-support/wait-for';

// The chart on its own control plane (it registers cluster-wide webhooks). The API server keeps an
// audit log of every request the chart's two ServiceAccounts make and enforces
// OwnerReferencesPermissionEnforcement (as OpenShift and hardened clusters do). Both controllers
// then run as local processes (their built main.js, the chart's own args) authenticated as those
// ServiceAccounts, behind the chart's webhook configurations (pointed at the processes), and play
// the IPAM + network flow against a Metal simulator and the CAPP fixture. The audit log proves
// that every grant of the chart was used, and that no request the controllers made was refused.

const run = promisify(execFile);
const chart = join(repoRoot, 'charts', 'metal-l2');
const releaseNs = 'metal-l2-system';
const release = 'metal-l2';
const TOKEN = 'metal-tok-chart-7d1e90c4-never-log-me';
const VXLAN = 1000;
const PROBE = 'rbac-probe';
const packetMachineTemplateKind: Kind = {
  group: 'infrastructure.cluster.x-k8s.io',
  version: 'v1beta1',
  plural: 'packetmachinetemplates',
  kind: 'PacketMachineTemplate',
  namespaced: true,
};

const controllers = {
  ipam: { sa: `${release}-ipam`, main: 'packages/ipam-controller/dist/main.js' },
  network: { sa: `${release}-network`, main: 'packages/network-controller/dist/main.js' },
} as const;
type ControllerKey = keyof typeof controllers;
const userOf = (key: ControllerKey): string => `system:serviceaccount:${releaseNs}:${controllers[key].sa}`;

let plane: OwnedControlPlane | undefined;
let kc: k8s.KubeConfig;
let helm = '';
let auditLog = '';

async function helmRun(args: readonly string[]): Promise<{ stdout: string; stderr: string }> {
  return run(helm, ['--kubeconfig', plane?.state.kubeconfig ?? '', ...args]);
}

beforeAll(async () => {
  const dir = await mkdtemp(join(tmpdir(), 'metal-l2-audit-'));
  auditLog = join(dir, 'audit.log');
  const policy = join(dir, 'policy.yaml');
  const users = JSON.stringify([userOf('ipam'), userOf('network')]);
  // Metadata for every request of the two ServiceAccounts; creates also carry the request body,
  // where the owner references (and so the finalizers grants) are seen.
  await writeFile(
    policy,
    [
      'apiVersion: audit.k8s.io/v1',
      'kind: Policy',
      'omitStages: [RequestReceived]',
      'rules:',
      `  - {level: Request, users: ${users}, verbs: [create]}`,
      `  - {level: Metadata, users: ${users}}`,
      '  - {level: None}',
      '',
    ].join('\n'),
  );
  plane = await startPrivateControlPlane('chart', {
    extraApiServerArgs: [
      `--audit-policy-file=${policy}`,
      `--audit-log-path=${auditLog}`,
      '--enable-admission-plugins=OwnerReferencesPermissionEnforcement',
    ],
  });
  kc = loadKubeConfig(plane.state.kubeconfig);
  helm = join(plane.binDir, 'helm');
  await installCrds(kc, [...(await upstreamCrds('capiV1_14')), ...(await upstreamCrds('capp')), machineHealthCheckStandIn()]);
}, 180_000);
afterAll(async () => {
  await stopPrivateControlPlane(plane);
});

describe('helm chart', () => {
  test('lints cleanly', async () => {
    const { stdout } = await run(helm, ['lint', '--strict', chart]);
    expect(stdout).toContain('0 chart(s) failed');
  });

  test('bad values are refused by values.schema.json, at lint and at install', async () => {
    for (const bad of [
      'webhook.certificates=self-signed',
      'ipam.replicas=-1',
      'securityContext.readOnlyRootFilesystem=false',
      'network.metalApiUrl=api.equinix.com',
      'network.metalRateLimit=10/s',
      'ipam.metalRateLimit=0:5',
      'network.replica=2',
      'ipam.gracefulShutdownTimeoutSeconds=0',
      'network.terminationGracePeriodSeconds=-1',
      'network.announcerImage=ghcr.io/metal-l2/metal-l2:%H',
    ]) {
      const refused = await run(helm, ['lint', '--strict', chart, '--set', bad]).then(
        () => 'accepted',
        (err: unknown) => String((err as { stdout?: string }).stdout),
      );
      expect(refused).toMatch(/values don't meet the specifications of the schema/);
    }
    await expect(
      helmRun(['install', 'bad', chart, '-n', 'bad-values', '--create-namespace', '--set', 'webhook.failurePolicy=Sometimes']),
    ).rejects.toThrow(/values don't meet the specifications of the schema/);
    await expect(helmRun(['status', 'bad', '-n', 'bad-values'])).rejects.toThrow(/not found/);
  });

  /** The chart's objects as `helm template` renders them with these `--set` values. */
  const render = async (...set: string[]): Promise<k8s.KubernetesObject[]> => {
    const { stdout } = await run(helm, ['template', release, chart, '-n', releaseNs, ...set.flatMap((v) => ['--set', v])]);
    return parseAllDocuments(stdout)
      .map((d) => d.toJS() as k8s.KubernetesObject | null)
      .filter((o): o is k8s.KubernetesObject => o !== null);
  };
  const find = <T>(objs: k8s.KubernetesObject[], kind: string, name: string): T =>
    objs.find((o) => o.kind === kind && o.metadata?.name === name) as T;

  // Ignition (Flatcar) control planes run keepalived from this image: the chart's own by default,
  // following image.repository and image.tag, or the value set.
  test("the announcer image is the chart's own image unless set", async () => {
    const args = async (...set: string[]): Promise<string[]> =>
      find<k8s.V1Deployment>(await render(...set), 'Deployment', controllers.network.sa).spec?.template.spec?.containers[0]?.args ?? [];
    const { appVersion } = parseDocument(await readFile(join(chart, 'Chart.yaml'), 'utf8')).toJS() as { appVersion: string };
    expect(await args()).toContain(`--announcer-image=ghcr.io/metal-l2/metal-l2:${appVersion}`);
    expect(await args('image.repository=registry.example.com/mirror/metal-l2', 'image.tag=0.1.0-fix')).toContain(
      '--announcer-image=registry.example.com/mirror/metal-l2:0.1.0-fix',
    );
    expect(await args('network.announcerImage=registry.example.com/other/keepalived-image:7')).toContain(
      '--announcer-image=registry.example.com/other/keepalived-image:7',
    );
  });

  test('two replicas keep a webhook up through drains; the grace period outlasts the graceful shutdown, or is refused', async () => {
    const single = await render();
    for (const key of ['ipam', 'network'] as const) {
      const pod = find<k8s.V1Deployment>(single, 'Deployment', controllers[key].sa).spec?.template.spec;
      expect(pod?.terminationGracePeriodSeconds).toBe(45);
      expect(pod?.containers[0]?.args).toContain('--graceful-shutdown-timeout-seconds=30');
      expect(pod?.affinity).toBeUndefined();
      // One replica: the budget must not block a drain for good.
      expect(find<k8s.V1PodDisruptionBudget>(single, 'PodDisruptionBudget', controllers[key].sa).spec).toMatchObject({ maxUnavailable: 1 });
    }

    const two = await render(
      'ipam.replicas=2',
      'network.replicas=2',
      'ipam.gracefulShutdownTimeoutSeconds=20',
      'network.terminationGracePeriodSeconds=60',
    );
    for (const key of ['ipam', 'network'] as const) {
      const deployment = find<k8s.V1Deployment>(two, 'Deployment', controllers[key].sa);
      expect(deployment.spec?.replicas).toBe(2);
      expect(
        deployment.spec?.template.spec?.affinity?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution?.[0]?.podAffinityTerm
          .topologyKey,
      ).toBe('kubernetes.io/hostname');
      const pdb = find<k8s.V1PodDisruptionBudget>(two, 'PodDisruptionBudget', controllers[key].sa).spec;
      expect(pdb?.minAvailable).toBe(1);
      expect(pdb?.maxUnavailable).toBeUndefined();
    }
    expect(find<k8s.V1Deployment>(two, 'Deployment', controllers.ipam.sa).spec?.template.spec?.terminationGracePeriodSeconds).toBe(35);
    expect(find<k8s.V1Deployment>(two, 'Deployment', controllers.network.sa).spec?.template.spec?.terminationGracePeriodSeconds).toBe(60);

    await expect(render('network.terminationGracePeriodSeconds=30')).rejects.toThrow(
      /network.terminationGracePeriodSeconds \(30\) must be at least network.gracefulShutdownTimeoutSeconds \+ 5 \(35\)/,
    );
  });

  test('installs both controllers hardened, with their webhooks carrying the CA, PDBs and metrics Services', async () => {
    await helmRun([
      'install',
      release,
      chart,
      '-n',
      releaseNs,
      '--create-namespace',
      '--set',
      `network.metalCredentials.secretName=${CREDENTIALS}`,
    ]);
    const apps = kc.makeApiClient(k8s.AppsV1Api);
    for (const key of ['ipam', 'network'] as const) {
      const deployment = await apps.readNamespacedDeployment({ namespace: releaseNs, name: controllers[key].sa });
      const pod = deployment.spec?.template.spec;
      expect(pod?.serviceAccountName).toBe(controllers[key].sa);
      expect(pod?.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
      expect(pod?.containers.map((c) => c.name)).toEqual(['manager']);
      const manager = pod?.containers[0];
      expect(manager?.command).toEqual(['node', `/app/${controllers[key].main}`]);
      expect(manager?.securityContext).toMatchObject({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        runAsNonRoot: true,
        capabilities: { drop: ['ALL'] },
      });
      expect(manager?.livenessProbe?.httpGet?.path).toBe('/healthz');
      expect(manager?.readinessProbe?.httpGet?.path).toBe('/readyz');
      expect(manager?.resources?.limits?.['memory']).toBeDefined();
      expect(manager?.args).toContain('--leader-elect=true');
      // The chart's default is the client's: the flag is there to be changed, not to change it.
      expect(manager?.args).toContain('--metal-rate-limit=10:20');
      const pdb = await kc
        .makeApiClient(k8s.PolicyV1Api)
        .readNamespacedPodDisruptionBudget({ namespace: releaseNs, name: controllers[key].sa });
      expect(pdb.spec?.maxUnavailable).toBe(1);
      const metrics = await kc
        .makeApiClient(k8s.CoreV1Api)
        .readNamespacedService({ namespace: releaseNs, name: `${controllers[key].sa}-metrics` });
      expect(metrics.spec?.ports?.map((p) => p.name)).toEqual(['metrics']);
    }
    const network = await apps.readNamespacedDeployment({ namespace: releaseNs, name: controllers.network.sa });
    expect(network.spec?.template.spec?.containers[0]?.args).toContain(`--metal-credentials-secret=${releaseNs}/${CREDENTIALS}`);

    const admission = kc.makeApiClient(k8s.AdmissionregistrationV1Api);
    const secret = await kc.makeApiClient(k8s.CoreV1Api).readNamespacedSecret({ namespace: releaseNs, name: `${release}-webhook-cert` });
    const ca = secret.data?.['ca.crt'];
    const ipamHooks = await admission.readValidatingWebhookConfiguration({ name: controllers.ipam.sa });
    expect(ipamHooks.webhooks?.map((w) => w.clientConfig.service?.path).sort()).toEqual([
      '/validate-ipam-metal-x-k8s-io-v1alpha1-globalinclusterippool',
      '/validate-ipam-metal-x-k8s-io-v1alpha1-inclusterippool',
    ]);
    const mutating = await admission.readMutatingWebhookConfiguration({ name: controllers.network.sa });
    // PacketMachines: linked by their own annotation; clones in opted-in namespaces; clones elsewhere.
    expect(mutating.webhooks?.map((w) => w.clientConfig.service?.path)).toEqual([
      '/mutate-infrastructure-cluster-x-k8s-io-v1beta1-packetmachine',
      '/mutate-infrastructure-cluster-x-k8s-io-v1beta1-packetmachine',
      '/mutate-infrastructure-cluster-x-k8s-io-v1beta1-packetmachine',
      '/mutate-cluster-x-k8s-io-cluster',
    ]);
    expect(mutating.webhooks?.map((w) => w.failurePolicy)).toEqual(['Fail', 'Fail', 'Ignore', 'Fail']);
    expect(mutating.webhooks?.[3]).toMatchObject({
      failurePolicy: 'Fail',
      rules: [{ apiGroups: ['cluster.x-k8s.io'], apiVersions: ['*'], operations: ['CREATE'], resources: ['clusters'] }],
    });
    expect(mutating.webhooks?.[3]?.matchConditions?.map((c) => c.name)).toEqual(['linked', 'no-endpoint']);
    expect(mutating.webhooks?.[0]).toMatchObject({
      failurePolicy: 'Fail',
      sideEffects: 'None',
      clientConfig: {
        service: { name: `${controllers.network.sa}-webhook`, path: '/mutate-infrastructure-cluster-x-k8s-io-v1beta1-packetmachine' },
      },
      rules: [
        { apiGroups: ['infrastructure.cluster.x-k8s.io'], apiVersions: ['v1beta1'], operations: ['CREATE'], resources: ['packetmachines'] },
      ],
    });
    expect(mutating.webhooks?.[0]?.timeoutSeconds).toBeLessThanOrEqual(10);
    const templateHooks = await admission.readValidatingWebhookConfiguration({ name: controllers.network.sa });
    expect(templateHooks.webhooks?.[0]).toMatchObject({
      clientConfig: { service: { path: '/validate-network-metal-x-k8s-io-v1alpha1-machinenetworktemplate' } },
      rules: [{ apiGroups: ['network.metal.x-k8s.io'], operations: ['CREATE', 'UPDATE'], resources: ['machinenetworktemplates'] }],
    });
    for (const hook of [...(ipamHooks.webhooks ?? []), ...(mutating.webhooks ?? []), ...(templateHooks.webhooks ?? [])])
      expect(hook.clientConfig.caBundle).toBe(ca);

    const crd = await kc
      .makeApiClient(k8s.ApiextensionsV1Api)
      .readCustomResourceDefinition({ name: 'machinenetworks.network.metal.x-k8s.io' });
    expect(crd.metadata?.labels?.['clusterctl.cluster.x-k8s.io/move-hierarchy']).toBe('');
    // An upgrade keeps the generated CA, so the webhook configurations keep matching the pods' certificate.
    await helmRun(['upgrade', release, chart, '-n', releaseNs, '--reuse-values']);
    const after = await kc.makeApiClient(k8s.CoreV1Api).readNamespacedSecret({ namespace: releaseNs, name: `${release}-webhook-cert` });
    expect(after.data?.['ca.crt']).toBe(ca);
  });
});

// ---------------------------------------------------------------------------------------------
// The controllers as their ServiceAccounts.

interface AuditEvent {
  stage: string;
  verb: string;
  user: { username: string };
  objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string; apiGroup?: string };
  responseStatus?: { code?: number };
  annotations?: Record<string, string>;
  requestObject?: { metadata?: { ownerReferences?: { apiVersion: string; kind: string; blockOwnerDeletion?: boolean }[] } };
}

async function auditEvents(): Promise<AuditEvent[]> {
  const text = await readFile(auditLog, 'utf8');
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as AuditEvent);
}

/** The refusals the test asks for on purpose (below): requests the controllers never make. */
const probes: readonly (readonly [ControllerKey, string, string, string?])[] = [
  ['network', 'delete', 'secrets'],
  ['network', 'list', 'secrets'],
  ['network', 'create', 'packetmachines'],
  ['ipam', 'patch', 'secrets'],
  ['ipam', 'create', 'machinenetworks'],
  // Limited to a namespace (watchNamespace), neither reads a Secret outside it.
  ['ipam', 'get', 'secrets', 'default'],
  ['network', 'get', 'secrets', 'default'],
];
function isProbe(e: AuditEvent): boolean {
  return probes.some(
    ([key, verb, resource, namespace]) =>
      e.user.username === userOf(key) &&
      e.verb === verb &&
      e.objectRef?.resource === resource &&
      (namespace === undefined || e.objectRef.namespace === namespace),
  );
}

/** Authorized (the object may still have been missing: a 404 of an allowed get counts). */
function allowed(e: AuditEvent): boolean {
  return e.annotations?.['authorization.k8s.io/decision'] === 'allow';
}

async function exercised(
  user: string,
  want: { verb: string; group: string; resource: string; namespace?: string | undefined; names?: readonly string[] | undefined },
): Promise<boolean> {
  const [resource, subresource] = want.resource.split('/');
  return (await auditEvents()).some(
    (e) =>
      e.user.username === user &&
      e.verb === want.verb &&
      (e.objectRef?.apiGroup ?? '') === want.group &&
      e.objectRef?.resource === resource &&
      (e.objectRef?.subresource ?? undefined) === subresource &&
      (want.namespace === undefined || e.objectRef?.namespace === want.namespace) &&
      (want.names === undefined || want.names.includes(e.objectRef?.name ?? '')) &&
      allowed(e),
  );
}

/** The kinds whose `<plural>/finalizers` the chart grants, for the blockOwnerDeletion check. */
const ownerKinds: Record<string, string> = {
  inclusterippools: 'InClusterIPPool',
  globalinclusterippools: 'GlobalInClusterIPPool',
  ipaddressclaims: 'IPAddressClaim',
  packetmachines: 'PacketMachine',
  machinenetworks: 'MachineNetwork',
  clusters: 'Cluster',
};

/**
 * `update <owner>/finalizers` is what OwnerReferencesPermissionEnforcement asks of a request that
 * sets blockOwnerDeletion on an owner reference: used when the ServiceAccount created such an object.
 */
async function finalizersUsed(user: string, group: string, resource: string): Promise<boolean> {
  const kind = ownerKinds[resource.split('/')[0] ?? ''];
  return (await auditEvents()).some(
    (e) =>
      e.user.username === user &&
      e.verb === 'create' &&
      allowed(e) &&
      (e.requestObject?.metadata?.ownerReferences ?? []).some(
        (o) => o.kind === kind && o.blockOwnerDeletion === true && o.apiVersion.startsWith(`${group}/`),
      ),
  );
}

interface Grant {
  readonly controller: ControllerKey;
  /** Where the grant holds: cluster-wide, or the namespace of its Role. */
  readonly scope: 'cluster' | { readonly namespace: string };
  readonly group: string;
  readonly resource: string;
  readonly verb: string;
  /** resourceNames, when the rule is limited to some objects. */
  readonly names?: readonly string[];
}

/** The only rules limited by name: the kube-system Namespace whose UID is the management cluster's identity. */
const namedRules: readonly string[] = ['ipam get core/namespaces kube-system'];
const describeGrant = (g: Grant): string =>
  `${g.controller}: ${g.verb} ${g.group === '' ? 'core' : g.group}/${g.resource} (${g.scope === 'cluster' ? 'cluster' : g.scope.namespace})`;

/** Every (group, resource, verb) the installed chart grants each ServiceAccount, read from the API server. */
async function chartGrants(): Promise<Grant[]> {
  const rbac = kc.makeApiClient(k8s.RbacAuthorizationV1Api);
  const grants: Grant[] = [];
  for (const key of ['ipam', 'network'] as const) {
    const bindings = (await rbac.listClusterRoleBinding()).items.filter((b) =>
      (b.subjects ?? []).some((s) => s.kind === 'ServiceAccount' && s.name === controllers[key].sa && s.namespace === releaseNs),
    );
    const roleBindings = (await rbac.listRoleBindingForAllNamespaces()).items.filter((b) =>
      (b.subjects ?? []).some((s) => s.kind === 'ServiceAccount' && s.name === controllers[key].sa && s.namespace === releaseNs),
    );
    const rules: { scope: Grant['scope']; rule: k8s.V1PolicyRule }[] = [];
    for (const b of bindings)
      for (const rule of (await rbac.readClusterRole({ name: b.roleRef.name })).rules ?? []) rules.push({ scope: 'cluster', rule });
    for (const b of roleBindings) {
      const namespace = b.metadata?.namespace ?? '';
      for (const rule of (await rbac.readNamespacedRole({ namespace, name: b.roleRef.name })).rules ?? [])
        rules.push({ scope: { namespace }, rule });
    }
    for (const { scope, rule } of rules) {
      for (const group of rule.apiGroups ?? [])
        for (const resource of rule.resources ?? [])
          for (const verb of rule.verbs) {
            const names = rule.resourceNames;
            if (names !== undefined && names.length > 0)
              expect(namedRules).toContain(`${key} ${verb} ${group === '' ? 'core' : group}/${resource} ${names.join(',')}`);
            grants.push({ controller: key, scope, group, resource, verb, ...(names === undefined || names.length === 0 ? {} : { names }) });
          }
    }
  }
  return grants;
}

async function grantUsed(g: Grant): Promise<boolean> {
  const user = userOf(g.controller);
  if (g.resource.endsWith('/finalizers')) return g.verb === 'update' && finalizersUsed(user, g.group, g.resource);
  return exercised(user, {
    verb: g.verb,
    group: g.group,
    resource: g.resource,
    namespace: g.scope === 'cluster' ? undefined : g.scope.namespace,
    names: g.names,
  });
}

async function saToken(name: string): Promise<string> {
  const token = await kc
    .makeApiClient(k8s.CoreV1Api)
    .createNamespacedServiceAccountToken({ namespace: releaseNs, name, body: { spec: { audiences: [], expirationSeconds: 3600 } } });
  return token.status?.token ?? '';
}

function kubeConfigFor(token: string): k8s.KubeConfig {
  const cluster = kc.getCurrentCluster();
  const asSa = new k8s.KubeConfig();
  asSa.loadFromOptions({
    clusters: [{ name: 'c', server: cluster?.server ?? '', caData: cluster?.caData }],
    users: [{ name: 'sa', token }],
    contexts: [{ name: 'c', cluster: 'c', user: 'sa' }],
    currentContext: 'c',
  });
  return asSa;
}

interface LocalController {
  readonly key: ControllerKey;
  readonly child: ChildProcess;
  readonly output: string[];
  readonly webhookPort: number;
  readonly healthPort: number;
}

/** The Deployment's args, with what only makes sense in a pod replaced by local equivalents. */
async function chartArgs(key: ControllerKey, local: Record<string, string>): Promise<string[]> {
  const deployment = await kc.makeApiClient(k8s.AppsV1Api).readNamespacedDeployment({ namespace: releaseNs, name: controllers[key].sa });
  const args = deployment.spec?.template.spec?.containers[0]?.args ?? [];
  const flag = (arg: string): string => arg.split('=')[0] ?? arg;
  return [...args.filter((a) => !(flag(a).slice(2) in local)), ...Object.entries(local).map(([k, v]) => `--${k}=${v}`)];
}

async function startLocalController(
  key: ControllerKey,
  options: { kubeconfig: string; certDir: string; sim: Simulator; overrides?: Record<string, string> },
): Promise<LocalController> {
  const [webhookPort, healthPort, metricsPort] = [await freePort(), await freePort(), await freePort()];
  const local: Record<string, string> = {
    kubeconfig: options.kubeconfig,
    'webhook-port': String(webhookPort),
    'webhook-cert-dir': options.certDir,
    'health-probe-bind-address': `127.0.0.1:${healthPort}`,
    'metrics-bind-address': `127.0.0.1:${metricsPort}`,
    'metal-api-url': options.sim.baseUrl,
    ...(key === 'network' ? { 'metadata-url': `${options.sim.url}/metadata` } : {}),
    ...options.overrides,
  };
  const args = await chartArgs(key, local);
  const output: string[] = [];
  const child = spawn(process.execPath, [join(repoRoot, controllers[key].main), ...args], {
    env: { ...process.env, POD_NAMESPACE: releaseNs, POD_NAME: `${controllers[key].sa}-local` },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (chunk: Buffer) => output.push(String(chunk)));
  child.stderr?.on('data', (chunk: Buffer) => output.push(String(chunk)));
  const controller = { key, child, output, webhookPort, healthPort };
  await waitFor(
    `the ${key} controller ready as its ServiceAccount`,
    async () => {
      if (child.exitCode !== null) throw new Error(`the ${key} controller exited with ${child.exitCode}:\n${output.join('')}`);
      const res = await fetch(`http://127.0.0.1:${healthPort}/readyz`).catch(() => undefined);
      return res?.status === 200;
    },
    { timeoutMs: 60_000, intervalMs: 200 },
  );
  return controller;
}

async function stopLocalController(c: LocalController | undefined): Promise<void> {
  if (c === undefined || c.child.exitCode !== null) return;
  const exited = new Promise((resolve) => c.child.once('exit', resolve));
  c.child.kill('SIGTERM');
  // Wait for the exit itself, with a deadline; past it, kill.
  const stopped = await waitFor('the controller to exit after SIGTERM', () => c.child.exitCode !== null || c.child.signalCode !== null, {
    timeoutMs: 15_000,
  }).catch(() => false);
  if (stopped === false) c.child.kill('SIGKILL');
  await exited;
}

/** Points the chart's webhook configurations at the local processes, keeping every other field. */
async function redirectWebhooks(caBundle: string, ports: Record<ControllerKey, number>): Promise<void> {
  const admission = kc.makeApiClient(k8s.AdmissionregistrationV1Api);
  // The path of the chart's Service reference, or of the URL an earlier redirect wrote.
  const pathOf = (c: k8s.AdmissionregistrationV1WebhookClientConfig): string =>
    c.service?.path ?? (c.url === undefined ? '' : new URL(c.url).pathname);
  const url = (key: ControllerKey, c: k8s.AdmissionregistrationV1WebhookClientConfig): string =>
    `https://127.0.0.1:${ports[key]}${pathOf(c)}`;
  for (const key of ['ipam', 'network'] as const) {
    const validating = await admission.readValidatingWebhookConfiguration({ name: controllers[key].sa });
    for (const hook of validating.webhooks ?? []) hook.clientConfig = { url: url(key, hook.clientConfig), caBundle };
    await admission.replaceValidatingWebhookConfiguration({ name: controllers[key].sa, body: validating });
  }
  const mutating = await admission.readMutatingWebhookConfiguration({ name: controllers.network.sa });
  for (const hook of mutating.webhooks ?? []) hook.clientConfig = { url: url('network', hook.clientConfig), caBundle };
  await admission.replaceMutatingWebhookConfiguration({ name: controllers.network.sa, body: mutating });
}

async function expectForbidden(what: string, call: () => Promise<unknown>): Promise<void> {
  try {
    await call();
  } catch (err: unknown) {
    if (err instanceof k8s.ApiException && err.code === 403) return;
    throw new Error(`${what}: expected 403 Forbidden`, { cause: err });
  }
  throw new Error(`${what}: the API server allowed it`);
}

/** Repeats `provoke` until the audit log shows the ServiceAccount using the grant. */
async function provokeUntilUsed(grant: Omit<Grant, 'scope'>, provoke: (attempt: number) => Promise<void>, attempts = 20): Promise<void> {
  let attempt = 0;
  await waitFor(
    `${grant.controller} to use ${grant.verb} ${grant.resource}`,
    async () => {
      if (await grantUsed({ ...grant, scope: 'cluster' })) return true;
      if (attempt < attempts) await provoke(attempt++);
      return false;
    },
    { timeoutMs: attempts * 2_000, intervalMs: 500 },
  );
}

describe("the chart's RBAC is exactly enough", () => {
  let sim: Simulator | undefined;
  let fixture: RunningCappFixture | undefined;
  const running: Partial<Record<ControllerKey, LocalController>> = {};
  let ns = '';
  let objects: Objects;

  afterAll(async () => {
    await fixture?.stop();
    await stopLocalController(running.network);
    await stopLocalController(running.ipam);
    await sim?.close();
  }, 60_000);

  /** A machine as Cluster API makes one; returns the PacketMachine as admitted (after our webhook). */
  async function createMachine(name: string, template: string, format = 'cloud-config'): Promise<Obj> {
    const admitted = await objects.create(netKinds.packetMachine, {
      metadata: {
        name,
        namespace: ns,
        labels: { 'cluster.x-k8s.io/cluster-name': CLUSTER },
        annotations: { 'network.metal.x-k8s.io/template': template },
      },
      spec: { machineType: 'c3.small.x86', metro: METRO, os: 'ubuntu_22_04', billingCycle: 'hourly' },
    });
    // CABPK's bootstrap data: owned by the Machine's KubeadmConfig, which the chart's Secret policy
    // requires (no CABPK runs here: the owner's kind is not served, so the garbage collector leaves it).
    await kc.makeApiClient(k8s.CoreV1Api).createNamespacedSecret({
      namespace: ns,
      body: {
        metadata: {
          name: `${name}-bootstrap`,
          labels: { 'cluster.x-k8s.io/cluster-name': CLUSTER },
          ownerReferences: [
            { apiVersion: 'bootstrap.cluster.x-k8s.io/v1beta1', kind: 'KubeadmConfig', name, uid: randomUUID(), controller: true },
          ],
        },
        type: 'cluster.x-k8s.io/secret',
        stringData: { value: cabpkCloudConfig(name), format },
      },
    });
    await objects.create(netKinds.machine, {
      metadata: { name, namespace: ns, labels: { 'cluster.x-k8s.io/cluster-name': CLUSTER } },
      spec: {
        clusterName: CLUSTER,
        version: 'v1.30.4',
        bootstrap: {
          configRef: { apiGroup: 'bootstrap.cluster.x-k8s.io', kind: 'KubeadmConfig', name },
          dataSecretName: `${name}-bootstrap`,
        },
        infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'PacketMachine', name },
      },
    });
    return admitted;
  }

  async function touch(kind: Kind, name: string, attempt: number): Promise<void> {
    await objects.patch(kind, name, ns, { metadata: { annotations: { 'metal-l2.test/touch': String(attempt) } } });
  }

  test('both controllers run as their ServiceAccounts through the flow; every grant is used; nothing they asked was refused', async () => {
    objects = new Objects(kc);
    const core = kc.makeApiClient(k8s.CoreV1Api);
    sim = await startSimulator({
      seed: 'chart-rbac',
      seedConfig: {
        metros: [{ code: METRO }],
        plans: [{ slug: 'c3.small.x86', ports: 2 }],
        projects: [{ name: 'capi', id: PROJECT_ID }],
        tokens: [{ token: TOKEN }],
      },
      delays: { deviceQueuedMs: 100, deviceProvisioningMs: 300, batchQueuedMs: 50, batchInProgressMs: 150 },
    });
    // The Secret the chart's --metal-credentials-secret names (the release namespace).
    await core.createNamespacedSecret({ namespace: releaseNs, body: { metadata: { name: CREDENTIALS }, stringData: { apiToken: TOKEN } } });

    // The controllers watch one namespace (the chart's watchNamespace): Secrets are then granted by
    // Roles in that namespace and in the release namespace (global pools' and the default token),
    // nowhere else.
    ns = await createTestNamespace(kc, 'chart-rbac');
    await helmRun([
      'upgrade',
      release,
      chart,
      '-n',
      releaseNs,
      '--reuse-values',
      '--set',
      `ipam.watchNamespace=${ns}`,
      '--set',
      `network.watchNamespace=${ns}`,
    ]);
    const clusterRoles = await Promise.all(
      (['ipam', 'network'] as const).map((key) =>
        kc.makeApiClient(k8s.RbacAuthorizationV1Api).readClusterRole({ name: controllers[key].sa }),
      ),
    );
    expect(clusterRoles.flatMap((r) => r.rules ?? []).filter((rule) => (rule.resources ?? []).includes('secrets'))).toEqual([]);

    const certs = await makeServingCertificate();
    const dir = await mkdtemp(join(tmpdir(), 'metal-l2-sa-'));
    const cluster = kc.getCurrentCluster();
    const kubeconfigs: Record<ControllerKey, string> = { ipam: join(dir, 'ipam.kubeconfig'), network: join(dir, 'network.kubeconfig') };
    const tokens: Record<ControllerKey, string> = {
      ipam: await saToken(controllers.ipam.sa),
      network: await saToken(controllers.network.sa),
    };
    for (const key of ['ipam', 'network'] as const) {
      await writeFile(
        kubeconfigs[key],
        renderKubeconfig({ server: cluster?.server ?? '', caData: cluster?.caData ?? '', token: tokens[key] }),
        { mode: 0o600 },
      );
    }
    running.ipam = await startLocalController('ipam', { kubeconfig: kubeconfigs.ipam, certDir: certs.certDir, sim });
    running.network = await startLocalController('network', { kubeconfig: kubeconfigs.network, certDir: certs.certDir, sim });
    await redirectWebhooks(certs.caBundle, { ipam: running.ipam.webhookPort, network: running.network.webhookPort });

    // Leader election: each holds its Lease (chart's --leader-election-id) in the release namespace.
    const leases = kc.makeApiClient(k8s.CoordinationV1Api);
    for (const key of ['ipam', 'network'] as const) {
      await waitFor(
        `the ${key} Lease held`,
        async () =>
          ((await leases.readNamespacedLease({ namespace: releaseNs, name: controllers[key].sa }).catch(() => undefined))?.spec
            ?.holderIdentity ?? '') !== '',
        {
          timeoutMs: 30_000,
        },
      );
    }

    // A second replica (ipam.replicas=2) waits for the Lease but serves the webhooks all the same:
    // with the webhooks pointed at it alone, it refuses a bad pool while the first still leads.
    const leader = (await leases.readNamespacedLease({ namespace: releaseNs, name: controllers.ipam.sa })).spec?.holderIdentity;
    const standby = await startLocalController('ipam', { kubeconfig: kubeconfigs.ipam, certDir: certs.certDir, sim });
    try {
      await redirectWebhooks(certs.caBundle, { ipam: standby.webhookPort, network: running.network.webhookPort });
      await expect(
        objects.create(netKinds.pool, {
          metadata: { name: 'standby-refuses', namespace: ns },
          spec: { addresses: ['10.80.0.10-10.80.0.20'], prefix: 24, gateway: '10.81.0.1' },
        }),
      ).rejects.toThrow(/admission webhook .*outside the pool's subnet/s);
      expect((await leases.readNamespacedLease({ namespace: releaseNs, name: controllers.ipam.sa })).spec?.holderIdentity).toBe(leader);
    } finally {
      await redirectWebhooks(certs.caBundle, { ipam: running.ipam.webhookPort, network: running.network.webhookPort });
      await stopLocalController(standby);
    }

    await core.createNamespacedSecret({ namespace: ns, body: { metadata: { name: CREDENTIALS }, stringData: { apiToken: TOKEN } } });
    const fixtureLines: string[] = [];
    fixture = await startCappForWorkloadCluster({ kc, objects, namespace: ns, sim, token: TOKEN, logLines: fixtureLines });

    // A VRF-backed pool (its credentials Secret, the Metal VRF, VLAN, gateway), a plain pool and a global one.
    await objects.create(netKinds.pool, vrfBackedPool({ namespace: ns, vrfName: 'chart', vxlan: VXLAN, credentials: CREDENTIALS }));
    await objects.create(netKinds.pool, {
      metadata: { name: 'plain', namespace: ns },
      spec: { addresses: ['10.70.0.10-10.70.0.200'], prefix: 24 },
    });
    // Global pools read their credentials Secret in the controller's namespace (the release namespace).
    await objects.create(kinds.globalPool, {
      metadata: { name: `chart-global-${ns}` },
      spec: {
        addresses: ['10.90.0.10-10.90.0.20'],
        prefix: 24,
        vrf: {
          projectID: PROJECT_ID,
          metro: METRO,
          credentialsSecretRef: { name: CREDENTIALS },
          create: { name: 'chart-global', ipRanges: ['10.90.0.0/16'], localASN: 65101 },
        },
      },
    });
    await waitFor(
      'the VRF-backed pool Ready',
      async () => condition(await objects.get(netKinds.pool, 'vrf-pool', ns), 'Ready')?.status === 'True',
      { timeoutMs: 60_000, intervalMs: 300 },
    );
    await waitFor(
      'the VRF-backed global pool Ready',
      async () => condition(await objects.get(kinds.globalPool, `chart-global-${ns}`), 'Ready')?.status === 'True',
      { timeoutMs: 60_000, intervalMs: 300 },
    );
    await objects.create(netKinds.claim, {
      metadata: { name: 'global-0', namespace: ns },
      spec: { poolRef: { apiGroup: 'ipam.metal.x-k8s.io', kind: 'GlobalInClusterIPPool', name: `chart-global-${ns}` } },
    });
    await waitFor('the global claim bound', async () => objects.get(kinds.address(), 'global-0', ns), { timeoutMs: timeouts.claimBound });
    // The claim's status (addressRef, Ready) is the IPAM controller's own write, through ipaddressclaims/status.
    const boundClaim = await waitFor(
      'the global claim Ready',
      async () => {
        const claim = await objects.get(netKinds.claim, 'global-0', ns);
        return condition(claim, 'Ready')?.status === 'True' ? claim : undefined;
      },
      { timeoutMs: timeouts.claimBound },
    );
    expect(boundClaim.status?.addressRef).toEqual({ name: 'global-0' });
    expect(condition(boundClaim, 'Ready')?.reason).toBe('AddressAllocated');
    const statusWrites = (await auditEvents()).filter(
      (e) =>
        e.user.username === userOf('ipam') &&
        e.verb === 'patch' &&
        e.objectRef?.resource === 'ipaddressclaims' &&
        e.objectRef.subresource === 'status' &&
        e.objectRef.name === 'global-0',
    );
    expect(statusWrites.length).toBeGreaterThan(0);
    expect(statusWrites.every((e) => allowed(e) && e.responseStatus?.code === 200)).toBe(true);

    // The network flow: a machine linked to a template is held by the webhook, gets its
    // MachineNetwork, claim, address and injected user data, is released, and its ports configured.
    await objects.create(netKinds.template, {
      metadata: { name: 'hb', namespace: ns },
      spec: {
        ports: [
          {
            name: 'bond0',
            vlans: [{ vxlan: VXLAN, addressesFromPools: [{ apiGroup: 'ipam.metal.x-k8s.io', kind: 'InClusterIPPool', name: 'vrf-pool' }] }],
          },
        ],
      },
    });
    await expect(
      objects.create(netKinds.template, {
        metadata: { name: 'two-defaults', namespace: ns },
        spec: {
          ports: [
            {
              name: 'bond0',
              vlans: [
                { vxlan: 1, routes: [{ to: 'default', via: '10.0.0.1' }] },
                { vxlan: 2, routes: [{ to: 'default', via: '10.0.1.1' }] },
              ],
            },
          ],
        },
      }),
    ).rejects.toThrow();
    const held = await createMachine('m-0', 'hb');
    expect(held.metadata.annotations?.['cluster.x-k8s.io/paused']).toBeDefined();
    const ready = await waitFor(
      'MachineNetwork m-0 Ready',
      async () => {
        const mn = await objects.get(netKinds.machineNetwork, 'm-0', ns);
        if (condition(mn, 'Ready')?.status === 'True') return mn;
        throw new Error(
          `${JSON.stringify(mn?.status?.conditions ?? 'no MachineNetwork')}\nCAPP fixture: ${fixtureLines.slice(-15).join('')}`,
        );
      },
      { timeoutMs: 90_000, intervalMs: 300 },
    );
    expect((ready.status?.addresses as { address: string }[] | undefined)?.[0]?.address).toMatch(/^10\.60\.1\./);
    const pm = await objects.get(netKinds.packetMachine, 'm-0', ns);
    expect(pm?.metadata.annotations?.['cluster.x-k8s.io/paused']).toBeUndefined();
    const injected = await core.readNamespacedSecret({ namespace: ns, name: 'm-0-bootstrap' });
    expect(Buffer.from(injected.data?.['value'] ?? '', 'base64').toString()).toContain('text/cloud-config');

    // A Cluster linked to a ClusterEndpointTemplate: held by the Cluster webhook, its endpoint
    // claimed (owned by the Cluster), written into it, and the hold ended.
    await objects.create(netKinds.endpointTemplate, {
      metadata: { name: 'cep', namespace: ns },
      spec: { vxlan: VXLAN, addressFromPool: { apiGroup: 'ipam.metal.x-k8s.io', kind: 'InClusterIPPool', name: 'plain' } },
    });
    const heldCluster = await objects.create(netKinds.cluster, {
      metadata: { name: 'ep', namespace: ns, annotations: { 'network.metal.x-k8s.io/endpoint-template': 'cep' } },
      spec: { infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'PacketCluster', name: 'ep' } },
    });
    expect(heldCluster.spec?.paused).toBe(true);
    const endpointSet = await waitFor(
      'Cluster ep released with its endpoint',
      async () => {
        const c = await objects.get(netKinds.cluster, 'ep', ns);
        return c?.spec?.paused !== true && c?.spec?.controlPlaneEndpoint?.host !== undefined ? c : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 300 },
    );
    expect(endpointSet.spec.controlPlaneEndpoint.host).toMatch(/^10\.70\.0\./);
    await waitFor(
      'ClusterEndpoint ep Ready',
      async () => condition(await objects.get(netKinds.clusterEndpoint, 'ep', ns), 'Ready')?.status === 'True',
      { timeoutMs: 30_000, intervalMs: 300 },
    );
    // Bound, the claim is linked to its Cluster (a patch of its label).
    expect((await objects.get(netKinds.claim, 'ep-endpoint', ns))?.metadata.labels?.['cluster.x-k8s.io/cluster-name']).toBe('ep');
    // A held Cluster whose pool no provider serves, then unlinked: the hold ends and its claim and
    // ClusterEndpoint are deleted.
    await objects.create(netKinds.endpointTemplate, {
      metadata: { name: 'cep-nobody', namespace: ns },
      spec: { vxlan: VXLAN, addressFromPool: { apiGroup: 'ipam.example.com', kind: 'NobodysPool', name: 'x' } },
    });
    await objects.create(netKinds.cluster, {
      metadata: { name: 'ep-gone', namespace: ns, annotations: { 'network.metal.x-k8s.io/endpoint-template': 'cep-nobody' } },
      spec: { infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'PacketCluster', name: 'ep-gone' } },
    });
    await waitFor('the claim of ep-gone', async () => (await objects.get(netKinds.claim, 'ep-gone-endpoint', ns)) !== undefined, {
      timeoutMs: 30_000,
      intervalMs: 300,
    });
    await objects.patch(netKinds.cluster, 'ep-gone', ns, {
      metadata: { annotations: { 'network.metal.x-k8s.io/endpoint-template': null } },
    });
    await waitFor(
      'ep-gone released, its claim and ClusterEndpoint deleted',
      async () =>
        (await objects.get(netKinds.cluster, 'ep-gone', ns))?.spec?.paused !== true &&
        (await objects.get(netKinds.claim, 'ep-gone-endpoint', ns)) === undefined &&
        (await objects.get(netKinds.clusterEndpoint, 'ep-gone', ns)) === undefined,
      { timeoutMs: 30_000, intervalMs: 300 },
    );

    // A machine cloned from a PacketMachineTemplate that carries the link: the webhook reads the template.
    await objects.create(packetMachineTemplateKind, {
      metadata: { name: 'pmt', namespace: ns, annotations: { 'network.metal.x-k8s.io/template': 'hb' } },
      spec: { template: { spec: { machineType: 'c3.small.x86', metro: METRO, os: 'ubuntu_22_04', billingCycle: 'hourly' } } },
    });
    const cloned = await objects.create(netKinds.packetMachine, {
      metadata: {
        name: 'm-t',
        namespace: ns,
        labels: { 'cluster.x-k8s.io/cluster-name': CLUSTER },
        annotations: {
          'cluster.x-k8s.io/cloned-from-name': 'pmt',
          'cluster.x-k8s.io/cloned-from-groupkind': 'PacketMachineTemplate.infrastructure.cluster.x-k8s.io',
        },
      },
      spec: { machineType: 'c3.small.x86', metro: METRO, os: 'ubuntu_22_04', billingCycle: 'hourly' },
    });
    expect(cloned.metadata.annotations?.['cluster.x-k8s.io/paused']).toBeDefined();
    // Two replicas without leader election (a misconfiguration the design tolerates) race to
    // create one machine's MachineNetwork: the loser reads the winner's back (get).
    const second = await startLocalController('network', {
      kubeconfig: kubeconfigs.network,
      certDir: certs.certDir,
      sim,
      overrides: { 'leader-elect': 'false', 'webhook-port': '0' },
    });
    try {
      await provokeUntilUsed(
        { controller: 'network', group: 'network.metal.x-k8s.io', resource: 'machinenetworks', verb: 'get' },
        async (n) => {
          await objects.create(netKinds.packetMachine, {
            metadata: {
              name: `race-mn-${n}`,
              namespace: ns,
              labels: { 'cluster.x-k8s.io/cluster-name': CLUSTER },
              annotations: { 'network.metal.x-k8s.io/template': 'hb' },
            },
            spec: { machineType: 'c3.small.x86', metro: METRO, os: 'ubuntu_22_04', billingCycle: 'hourly' },
          });
        },
      );
    } finally {
      await stopLocalController(second);
    }

    // A claim named like the machine's own but not its (read back, reported, never adopted).
    await objects.create(netKinds.claim, {
      metadata: { name: 'm-c-bond0-v1000-0', namespace: ns },
      spec: { poolRef: { apiGroup: 'ipam.metal.x-k8s.io', kind: 'InClusterIPPool', name: 'plain' } },
    });
    await createMachine('m-c', 'hb');
    await waitFor(
      'm-c reports the claim conflict',
      async () => condition(await objects.get(netKinds.machineNetwork, 'm-c', ns), 'AddressesAllocated')?.reason === 'ClaimConflict',
      { timeoutMs: 30_000, intervalMs: 300 },
    );

    // Repeated events become a series (patch): user data in a format nobody can inject into.
    await createMachine('m-bad', 'hb', 'bogus');
    await provokeUntilUsed({ controller: 'network', group: '', resource: 'events', verb: 'patch' }, (n) =>
      touch(netKinds.packetMachine, 'm-bad', n),
    );
    // The IPAM controller's series: a second IPAddress for a bound claim makes every pass report the conflict.
    await objects.create(netKinds.claim, {
      metadata: { name: 'squat', namespace: ns },
      spec: { poolRef: { apiGroup: 'ipam.metal.x-k8s.io', kind: 'InClusterIPPool', name: 'plain' } },
    });
    await waitFor('claim squat bound', async () => objects.get(kinds.address(), 'squat', ns), { timeoutMs: timeouts.claimBound });
    await objects.create(kinds.address(), {
      metadata: { name: 'squat-dup', namespace: ns },
      spec: {
        address: '10.70.0.199',
        prefix: 24,
        claimRef: { name: 'squat' },
        poolRef: { apiGroup: 'ipam.metal.x-k8s.io', kind: 'InClusterIPPool', name: 'plain' },
      },
    });
    await provokeUntilUsed({ controller: 'ipam', group: '', resource: 'events', verb: 'patch' }, (n) => touch(netKinds.pool, 'plain', n));
    // A claim finalizer patch that loses a race to another writer is read back (get).
    await provokeUntilUsed({ controller: 'ipam', group: 'ipam.cluster.x-k8s.io', resource: 'ipaddressclaims', verb: 'get' }, async (n) => {
      const name = `race-${n}`;
      await objects.create(netKinds.claim, {
        metadata: { name, namespace: ns },
        spec: { poolRef: { apiGroup: 'ipam.metal.x-k8s.io', kind: 'InClusterIPPool', name: 'plain' } },
      });
      for (let i = 0; i < 30; i++) await touch(netKinds.claim, name, i);
    });

    // A MachineNetwork deleted while its machine lives hands its claims to the PacketMachine and
    // the new one takes them back (patch), with the same address.
    await objects.delete(netKinds.machineNetwork, 'm-0', ns);
    const kept = await waitFor(
      'a new MachineNetwork m-0 Ready',
      async () => {
        const mn = await objects.get(netKinds.machineNetwork, 'm-0', ns);
        return mn !== undefined && mn.metadata.uid !== ready.metadata.uid && condition(mn, 'Ready')?.status === 'True' ? mn : false;
      },
      { timeoutMs: 90_000, intervalMs: 300 },
    );
    expect((kept.status?.addresses as { address: string }[] | undefined)?.[0]?.address).toBe(
      (ready.status?.addresses as { address: string }[] | undefined)?.[0]?.address,
    );

    // Deletion: the MachineNetwork goes with its machine, the claim and the IPAddress with it.
    await objects.delete(netKinds.packetMachine, 'm-0', ns);
    await waitFor('MachineNetwork m-0 gone', async () => (await objects.get(netKinds.machineNetwork, 'm-0', ns)) === undefined, {
      timeoutMs: 60_000,
      intervalMs: 300,
    });
    await waitFor('the IPAddress of m-0 gone', async () => (await objects.get(kinds.address(), 'm-0-bond0-v1000-0', ns)) === undefined, {
      timeoutMs: 30_000,
      intervalMs: 300,
    });

    // What lies outside the grants is refused.
    const asNetwork = kubeConfigFor(tokens.network);
    const asIpam = kubeConfigFor(tokens.ipam);
    const netCore = asNetwork.makeApiClient(k8s.CoreV1Api);
    const netCustom = asNetwork.makeApiClient(k8s.CustomObjectsApi);
    await expectForbidden('network controller deletes a Secret', () =>
      netCore.deleteNamespacedSecret({ namespace: releaseNs, name: CREDENTIALS }),
    );
    await expectForbidden('network controller lists Secrets', () => netCore.listNamespacedSecret({ namespace: ns }));
    await expectForbidden('network controller reads a Secret outside its namespaces', () =>
      netCore.readNamespacedSecret({ namespace: 'default', name: CREDENTIALS }),
    );
    await expectForbidden('IPAM controller reads a Secret outside its namespaces', () =>
      asIpam.makeApiClient(k8s.CoreV1Api).readNamespacedSecret({ namespace: 'default', name: CREDENTIALS }),
    );
    await expectForbidden('network controller creates a PacketMachine', () =>
      netCustom.createNamespacedCustomObject({
        group: 'infrastructure.cluster.x-k8s.io',
        version: 'v1beta1',
        namespace: ns,
        plural: 'packetmachines',
        body: { apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1', kind: 'PacketMachine', metadata: { name: PROBE }, spec: {} },
      }),
    );
    const plain = await objects.get(netKinds.pool, 'plain', ns);
    await expectForbidden('network controller blocks the deletion of a pool (blockOwnerDeletion without inclusterippools/finalizers)', () =>
      netCustom.createNamespacedCustomObject({
        group: 'ipam.cluster.x-k8s.io',
        version: 'v1beta2',
        namespace: ns,
        plural: 'ipaddressclaims',
        body: {
          apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
          kind: 'IPAddressClaim',
          metadata: {
            name: PROBE,
            ownerReferences: [
              {
                apiVersion: 'ipam.metal.x-k8s.io/v1alpha1',
                kind: 'InClusterIPPool',
                name: 'plain',
                uid: plain?.metadata.uid ?? '',
                blockOwnerDeletion: true,
              },
            ],
          },
          spec: { poolRef: { apiGroup: 'ipam.metal.x-k8s.io', kind: 'InClusterIPPool', name: 'plain' } },
        },
      }),
    );
    await expectForbidden('IPAM controller patches a Secret', () =>
      asIpam
        .makeApiClient(k8s.CoreV1Api)
        .patchNamespacedSecret(
          { namespace: ns, name: CREDENTIALS, body: { metadata: { labels: { x: 'y' } } } },
          k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
        ),
    );
    await expectForbidden('IPAM controller creates a MachineNetwork', () =>
      asIpam.makeApiClient(k8s.CustomObjectsApi).createNamespacedCustomObject({
        group: 'network.metal.x-k8s.io',
        version: 'v1alpha1',
        namespace: ns,
        plural: 'machinenetworks',
        body: { apiVersion: 'network.metal.x-k8s.io/v1alpha1', kind: 'MachineNetwork', metadata: { name: PROBE }, spec: { ports: [] } },
      }),
    );

    // Stopping hands the Leases back (an update) so a new pod need not wait for them to expire.
    await stopLocalController(running.network);
    await stopLocalController(running.ipam);

    const grants = await chartGrants();
    expect(grants.length).toBeGreaterThan(30);
    const unused: string[] = [];
    for (const g of grants) if (!(await grantUsed(g))) unused.push(describeGrant(g));
    expect(unused).toEqual([]);

    const refused = (await auditEvents()).filter(
      (e) =>
        (e.user.username === userOf('ipam') || e.user.username === userOf('network')) &&
        e.annotations?.['authorization.k8s.io/decision'] !== 'allow' &&
        !isProbe(e),
    );
    expect(
      refused.map(
        (e) =>
          `${e.user.username} ${e.verb} ${e.objectRef?.resource}/${e.objectRef?.subresource ?? ''} ${e.objectRef?.namespace ?? ''}/${e.objectRef?.name ?? ''}`,
      ),
    ).toEqual([]);
    // The Metal token never reaches a log line.
    for (const key of ['ipam', 'network'] as const) expect(running[key]?.output.join('') ?? '').not.toContain(TOKEN);
  }, 300_000);
});

describe('the network edges on the real API server', () => {
  // A fresh release: the tests above pointed its webhooks at local processes (url), which a Helm
  // upgrade cannot merge with the chart's Service reference.
  beforeAll(async () => {
    await helmRun(['uninstall', release, '-n', releaseNs, '--wait']).catch(() => undefined);
  }, 120_000);

  /** A PacketMachine as a user writes one; `annotations` decide whether it may be linked. */
  function packetMachine(name: string, namespace: string, annotations: Record<string, string>, spec: Record<string, unknown> = {}): Obj {
    return {
      metadata: { name, namespace, annotations },
      spec: { machineType: 'c3.small.x86', metro: METRO, os: 'ubuntu_22_04', billingCycle: 'hourly', ...spec },
    };
  }

  test('with watchNamespace, the PacketMachine webhooks see only that namespace; while they are down, unlinked machines and clones in a namespace without the opt-in label are created, machines linked by their own annotation and clones in an opted-in namespace refused', async () => {
    const objects = new Objects(kc);
    const scoped = await createTestNamespace(kc, 'chart-scope');
    const other = await createTestNamespace(kc, 'chart-other');
    await helmRun([
      'upgrade',
      '--install',
      release,
      chart,
      '-n',
      releaseNs,
      '--create-namespace',
      '--reuse-values',
      '--set',
      `network.watchNamespace=${scoped}`,
    ]);
    const mutating = await kc
      .makeApiClient(k8s.AdmissionregistrationV1Api)
      .readMutatingWebhookConfiguration({ name: controllers.network.sa });
    // No network controller runs: the webhook is down (its Service has no endpoints, or the
    // redirect of an earlier test points at a stopped process).
    const unlinked = await objects.create(netKinds.packetMachine, packetMachine('unlinked', scoped, {}));
    expect(unlinked.metadata.annotations?.['cluster.x-k8s.io/paused']).toBeUndefined();
    const emptyLink = await objects.create(
      netKinds.packetMachine,
      packetMachine('empty-link', scoped, { 'network.metal.x-k8s.io/template': '' }),
    );
    expect(emptyLink.metadata.uid).toBeDefined();
    // clusterctl move recreates provisioned machines: they never need the webhook.
    const moved = await objects.create(
      netKinds.packetMachine,
      packetMachine(
        'moved',
        scoped,
        { 'network.metal.x-k8s.io/template': 'hb' },
        { providerID: 'equinixmetal://5a7b1c2d-0000-4000-8000-000000000001' },
      ),
    );
    expect(moved.metadata.uid).toBeDefined();
    // Another namespace is not the controller's: nothing would ever release a hold there.
    const elsewhere = await objects.create(
      netKinds.packetMachine,
      packetMachine('linked', other, { 'network.metal.x-k8s.io/template': 'hb' }),
    );
    expect(elsewhere.metadata.annotations?.['cluster.x-k8s.io/paused']).toBeUndefined();

    await expect(
      objects.create(netKinds.packetMachine, packetMachine('linked', scoped, { 'network.metal.x-k8s.io/template': 'hb' })),
    ).rejects.toThrow(/failed calling webhook\W+packetmachine\.network\.metal\.x-k8s\.io/);
    expect(await objects.get(netKinds.packetMachine, 'linked', scoped)).toBeUndefined();
    // A clone's link is on its PacketMachineTemplate, which CEL cannot read: in a namespace that
    // did not opt in, a down webhook admits it (clusters that never use metal-l2 scale and
    // remediate; the controller holds a linked one once it runs).
    const clone = await objects.create(
      netKinds.packetMachine,
      packetMachine('cloned', scoped, { 'cluster.x-k8s.io/cloned-from-name': 'pmt' }),
    );
    expect(clone.metadata.annotations?.['cluster.x-k8s.io/paused']).toBeUndefined();
    // A clone whose MachineDeployment's machine template carries the link (CAPI copies it): refused.
    await expect(
      objects.create(
        netKinds.packetMachine,
        packetMachine('cloned-linked', scoped, { 'cluster.x-k8s.io/cloned-from-name': 'pmt', 'network.metal.x-k8s.io/template': 'hb' }),
      ),
    ).rejects.toThrow(/failed calling webhook\W+packetmachine\.network\.metal\.x-k8s\.io/);
    // The namespace opts in: every clone there is refused while the webhook is down (fail closed).
    await kc
      .makeApiClient(k8s.CoreV1Api)
      .patchNamespace(
        { name: scoped, body: { metadata: { labels: { 'network.metal.x-k8s.io/enabled': 'true' } } } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      );
    const refusal = await waitFor(
      'the opt-in label to reach the webhooks',
      async () => {
        try {
          const name = `cloned-${Date.now()}`;
          await objects.create(netKinds.packetMachine, packetMachine(name, scoped, { 'cluster.x-k8s.io/cloned-from-name': 'pmt' }));
          await objects.delete(netKinds.packetMachine, name, scoped);
          return undefined;
        } catch (err: unknown) {
          return err instanceof Error ? err.message : String(err);
        }
      },
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    expect(refusal).toMatch(/failed calling webhook\W+cloned\.packetmachine\.network\.metal\.x-k8s\.io/);

    // The three, as the chart registers them: the scope of the controller's namespace on each.
    const scope = { key: 'kubernetes.io/metadata.name', operator: 'In', values: [scoped] };
    const optIn = { key: 'network.metal.x-k8s.io/enabled', values: ['true'] };
    expect(
      (mutating.webhooks ?? [])
        .filter((h) => h.name.endsWith('packetmachine.network.metal.x-k8s.io'))
        .map((h) => ({ name: h.name, failurePolicy: h.failurePolicy, namespaces: h.namespaceSelector?.matchExpressions })),
    ).toEqual([
      { name: 'packetmachine.network.metal.x-k8s.io', failurePolicy: 'Fail', namespaces: [scope] },
      { name: 'cloned.packetmachine.network.metal.x-k8s.io', failurePolicy: 'Fail', namespaces: [{ ...optIn, operator: 'In' }, scope] },
      {
        name: 'cloned-elsewhere.packetmachine.network.metal.x-k8s.io',
        failurePolicy: 'Ignore',
        namespaces: [{ ...optIn, operator: 'NotIn' }, scope],
      },
    ]);
  }, 120_000);

  test("the network controller's ServiceAccount may change the key value of bootstrap data Secrets and nothing else, although RBAC lets it patch every Secret", async () => {
    const scoped = await createTestNamespace(kc, 'chart-secrets');
    await helmRun([
      'upgrade',
      '--install',
      release,
      chart,
      '-n',
      releaseNs,
      '--create-namespace',
      '--reuse-values',
      '--set',
      `network.watchNamespace=${scoped}`,
    ]);
    const core = kc.makeApiClient(k8s.CoreV1Api);
    // Secrets as Cluster API v1.7.9 makes them, all of type cluster.x-k8s.io/secret with the
    // cluster's label: CABPK's bootstrap data (controller owner: its KubeadmConfig; keys value and
    // format), KCP's cluster CA (controller owner: the KubeadmControlPlane), and user-made bootstrap
    // data of a Machine without a bootstrap config, labelled for us. And an application's Secret.
    const capiSecret = (name: string, owner: { kind: string; apiVersion: string } | undefined, data: Record<string, string>, labels = {}) =>
      core.createNamespacedSecret({
        namespace: scoped,
        body: {
          metadata: {
            name,
            labels: { 'cluster.x-k8s.io/cluster-name': 'c1', ...labels },
            ...(owner === undefined
              ? {}
              : { ownerReferences: [{ ...owner, name: name.replace(/-ca$/, ''), uid: randomUUID(), controller: true }] }),
          },
          type: 'cluster.x-k8s.io/secret',
          stringData: data,
        },
      });
    await capiSecret(
      'm-0',
      { apiVersion: 'bootstrap.cluster.x-k8s.io/v1beta1', kind: 'KubeadmConfig' },
      { value: '#cloud-config\n', format: 'cloud-config' },
    );
    await capiSecret(
      'c1-ca',
      { apiVersion: 'controlplane.cluster.x-k8s.io/v1beta1', kind: 'KubeadmControlPlane' },
      { 'tls.crt': 'ca-cert', 'tls.key': 'ca-key' },
    );
    await capiSecret('m-1-userdata', undefined, { value: '#cloud-config\n' }, { 'network.metal.x-k8s.io/bootstrap-data': 'true' });
    await capiSecret('m-2-userdata', undefined, { value: '#cloud-config\n' });
    await core.createNamespacedSecret({ namespace: scoped, body: { metadata: { name: 'app-db' }, stringData: { password: 'hunter2' } } });
    const asNetwork = kubeConfigFor(await saToken(controllers.network.sa)).makeApiClient(k8s.CoreV1Api);
    const patch = (name: string, body: object): Promise<k8s.V1Secret> =>
      asNetwork.patchNamespacedSecret(
        { namespace: scoped, name, body },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      );
    const b64 = (text: string): string => Buffer.from(text).toString('base64');
    const refusalOf = async (name: string, body: object): Promise<string> => {
      try {
        await patch(name, body);
      } catch (err: unknown) {
        if (err instanceof k8s.ApiException && err.code === 403) return String(err.body);
        throw err;
      }
      throw new Error(`the patch of Secret ${scoped}/${name} was allowed`);
    };

    // RBAC grants it: the Role in the watched namespace.
    const review = await kc.makeApiClient(k8s.AuthorizationV1Api).createSubjectAccessReview({
      body: {
        spec: { user: userOf('network'), resourceAttributes: { namespace: scoped, verb: 'patch', resource: 'secrets', name: 'c1-ca' } },
      },
    });
    expect(review.status?.allowed).toBe(true);
    // The API server serves and enforces ValidatingAdmissionPolicies (GA in 1.30); the policy takes
    // a moment to reach its admission chain after install.
    const opaque = await waitFor(
      'the Secret policy to refuse a patch of an Opaque Secret',
      async () => {
        try {
          await patch('app-db', { data: { password: b64(String(Date.now())) } });
          return undefined;
        } catch (err: unknown) {
          if (err instanceof k8s.ApiException && err.code === 403) return String(err.body);
          throw err;
        }
      },
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    expect(opaque).toContain(`Secret ${scoped}/app-db`);

    // The cluster's CA is of the bootstrap data's type, but no bootstrap config owns it.
    const ca = await refusalOf('c1-ca', { data: { 'tls.key': b64('attacker-key') } });
    expect(ca).toContain('owned by a bootstrap config of kind KubeadmConfig');
    expect(ca).toContain(`Secret ${scoped}/c1-ca is not one`);
    expect(opaque).toContain(`may change bootstrap data Secrets only`);
    expect(opaque).toContain(`Secret ${scoped}/app-db is not one`);
    expect(await refusalOf('m-2-userdata', { data: { value: b64('#cloud-config\nruncmd: [reboot]\n') } })).toContain(
      `Secret ${scoped}/m-2-userdata is not one`,
    );
    // A bootstrap data Secret: its key value, and nothing else.
    expect(await refusalOf('m-0', { data: { format: b64('ignition') } })).toContain(
      `may change only the key value of bootstrap data Secret ${scoped}/m-0: another data key may not change`,
    );
    expect(await refusalOf('m-0', { metadata: { annotations: { 'metal-l2.test/touched': 'x' } } })).toContain(
      'its metadata (labels, annotations, owners, finalizers) or immutable may not change',
    );
    expect(await refusalOf('m-0', { metadata: { labels: { 'network.metal.x-k8s.io/bootstrap-data': 'true' } } })).toContain('its metadata');
    const injected = await patch('m-0', { data: { value: b64('#cloud-config\n# injected\n') } });
    expect(Buffer.from(injected.data?.['value'] ?? '', 'base64').toString()).toBe('#cloud-config\n# injected\n');
    await patch('m-1-userdata', { data: { value: b64('#cloud-config\n# injected\n') } });

    const after = await core.readNamespacedSecret({ namespace: scoped, name: 'c1-ca' });
    expect(Buffer.from(after.data?.['tls.key'] ?? '', 'base64').toString()).toBe('ca-key');
  }, 120_000);
});
