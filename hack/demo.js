// The demo, on the local control plane `npm run cluster:up` started (.local/kubeconfig). Starts the
// Equinix Metal API simulator, both controllers (their built main.js, with their webhooks behind a
// certificate made here with openssl) and the CAPP fixture as detached processes, creates a
// VRF-backed pool, one MachineNetworkTemplate per network mode and a handful of machines the way
// Cluster API would, follows them to Ready and prints a table. Everything stays up for kubectl;
// `npm run demo:down` stops it (the pids are in .local/demo/state.json).
// With --in-cluster (on `npm run cluster:up -- --node`) the controllers are pods instead: the image
// in .local/image imported into the node's containerd and `helm install` of charts/metal-l2 with a
// user's values. The simulator and the fixture stay processes on this host; the rest is the same.
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { Buffer } from 'node:buffer';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cabpkIgnition, reserveClusterEndpoint } from '@metal-l2/capp-fixture';
import {
  IMAGE_REPOSITORY,
  RELEASE,
  RELEASE_NAMESPACE,
  controllerDeployments,
  freePort,
  importImage,
  installRelease,
  readBuiltImage,
  readControlPlaneState,
  userValueFlags,
  waitReleaseReady,
} from '@metal-l2/local-control-plane';
import { createMetalClient } from '@metal-l2/metal-api';

const root = fileURLToPath(new URL('../', import.meta.url));
// METAL_L2_LOCAL moves the demo's state (kubeconfig, bin/, demo/) elsewhere: test/demo runs the demo
// on a control plane of its own without touching a demo a user has up in .local.
const local = process.env['METAL_L2_LOCAL'] ?? join(root, '.local');
const kubeconfig = join(local, 'kubeconfig');
const demoDir = join(local, 'demo');
const stateFile = join(demoDir, 'state.json');
const manifestDir = join(demoDir, 'manifests');
const shared = process.env['METAL_L2_SHARED'] ?? join(root, '..', 'shared');
const ns = 'demo';
const CLUSTER = 'demo-cluster';
const METRO = 'da';
const PROJECT_ID = '5e0f2c5a-8a3b-4a4e-9d4c-1b2c3d4e5f60';
const TOKEN = 'demo-metal-token';
const CONTROLLER_AGENT = 'metal-l2-network-controller';
const started = Date.now();
// `--in-cluster`: the controllers run as pods on the node of `npm run cluster:up -- --node`,
// installed by `helm install` of charts/metal-l2 from the image `npm run image` built.
const inCluster = process.argv.includes('--in-cluster');
const imageDir = join(local, 'image');
const tools = { kubectl: join(local, 'bin', 'kubectl'), helm: join(local, 'bin', 'helm'), kubeconfig };

/** @param {string[]} args @param {string} [input] @returns {string} */
const kubectl = (args, input) =>
  execFileSync(join(local, 'bin', 'kubectl'), ['--kubeconfig', kubeconfig, ...args], {
    encoding: 'utf8',
    input,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
/** @param {string[]} args */
const show = (args) => {
  console.log(`\n$ kubectl ${args.join(' ')}`);
  console.log(kubectl(args).trimEnd());
};
const step = (/** @type {string} */ text) => console.log(`\n== ${text}`);
const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1).padStart(5)} s`;
const sleep = (/** @type {number} */ ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Polls `probe` until it returns true.
 * @param {string} what
 * @param {() => boolean | Promise<boolean>} probe
 * @param {number} [timeoutMs]
 */
async function waitFor(what, probe, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await probe()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(250);
  }
}

/** @type {{ mode: 'processes' | 'in-cluster', processes: { name: string; pid: number; script: string; log: string }[]; webhooks: string[]; simulator?: string, release?: { name: string, namespace: string } }} */
const state = { mode: inCluster ? 'in-cluster' : 'processes', processes: [], webhooks: [] };
const saveState = () => writeFileSync(stateFile, `${JSON.stringify(state, null, 2)}\n`);

/** @type {Map<string, import('node:child_process').ChildProcess>} */
const children = new Map();

/**
 * Starts `node <script> ...args` in its own process group with its output in .local/demo/<name>.log,
 * records its pid in state.json, and lets it outlive this script.
 * @param {{ name: string, script: string, args: string[], env?: Record<string, string> }} options `script` is a path below the repository root
 */
function startProcess({ name, script, args, env = {} }) {
  const log = join(demoDir, `${name}.log`);
  const fd = openSync(log, 'w');
  const child = spawn(process.execPath, [join(root, script), ...args], {
    detached: true,
    stdio: ['ignore', fd, fd],
    env: { ...process.env, ...env },
  });
  closeSync(fd);
  child.unref();
  if (child.pid === undefined) throw new Error(`${name} did not start`);
  children.set(name, child);
  state.processes.push({ name, pid: child.pid, script, log: relative(root, log) });
  saveState();
  console.log(`  ${name.padEnd(20)} pid ${child.pid}, log .local/demo/${name}.log`);
  return child;
}

/** Throws with the tail of its log when a process this demo started has exited. */
function assertAlive() {
  for (const [name, child] of children) {
    if (child.exitCode !== null || child.signalCode !== null) {
      const log = join(demoDir, `${name}.log`);
      const tail = existsSync(log) ? readFileSync(log, 'utf8').trimEnd().split('\n').slice(-15).join('\n') : '';
      throw new Error(`${name} exited (${child.exitCode ?? child.signalCode}); the end of its log:\n${tail}`);
    }
  }
}

/**
 * Writes a manifest under .local/demo/manifests/ (so you can read what the demo made) and applies it.
 * @param {string} file
 * @param {string} yaml
 */
function apply(file, yaml) {
  writeFileSync(join(manifestDir, file), yaml);
  kubectl(['apply', '-f', join(manifestDir, file)]);
}

/** @param {string} url */
const answers = (url) =>
  fetch(url).then(
    (res) => res.ok,
    () => false,
  );

/** @typedef {{ sim: number, ipamMetrics: number, ipamHealth: number, ipamWebhook: number, netMetrics: number, netHealth: number, netWebhook: number }} Ports */

/** Our CRDs served: from crds/ in the process demo, from the chart's crds/ in the cluster. */
function waitCrdsEstablished() {
  kubectl([
    'wait',
    '--for=condition=Established',
    '--timeout=60s',
    'crd/ipaddressclaims.ipam.cluster.x-k8s.io',
    'crd/inclusterippools.ipam.metal.x-k8s.io',
    'crd/packetmachines.infrastructure.cluster.x-k8s.io',
    'crd/machinenetworks.network.metal.x-k8s.io',
  ]);
}

/**
 * The node `npm run cluster:up -- --node` started (its state in .local/cluster, a link followed).
 * @returns {Promise<import('@metal-l2/local-control-plane').NodeClusterState['node']>}
 */
async function clusterNode() {
  const dir = join(local, 'cluster');
  const cluster = /** @type {import('@metal-l2/local-control-plane').NodeClusterState | undefined} */ (
    await readControlPlaneState(existsSync(dir) ? realpathSync(dir) : dir)
  );
  if (cluster?.node === undefined) {
    throw new Error('--in-cluster needs a node: `npm run cluster:up -- --node` first (or `npm run demo -- --in-cluster`)');
  }
  return cluster.node;
}

/**
 * The in-cluster demo's controllers: the image imported into the node's containerd, then a user's
 * `helm install` of charts/metal-l2 (release.ts, shared with test/node), followed until both
 * Deployments are Available and their Services lead to the pods.
 * @param {{ metalUrl: string, simUrl: string, node: import('@metal-l2/local-control-plane').NodeClusterState['node'] }} options
 */
async function installChart({ metalUrl, simUrl, node }) {
  step(
    `the controllers: \`helm install\` of charts/metal-l2 onto node ${node.name}, from the image built here (${relative(root, imageDir)})`,
  );
  if (!existsSync(join(imageDir, 'image.json'))) {
    throw new Error(`no image in ${imageDir}: run \`npm run image\` (\`npm run demo -- --in-cluster\` builds it when missing)`);
  }
  const image = await readBuiltImage(imageDir);
  const digest = await importImage(node.containerdSocket, image);
  console.log(
    `  ${IMAGE_REPOSITORY}:${image.tag} imported into the node's containerd (${(image.compressedBytes / 1e6).toFixed(1)} MB compressed; ${digest})`,
  );
  /** @type {import('@metal-l2/local-control-plane').UserValues} */
  const values = { imageTag: image.tag, metalApiUrl: metalUrl, metadataUrl: `${simUrl}/metadata`, credentialsSecret: 'metal-credentials' };
  console.log(`  Secret ${RELEASE_NAMESPACE}/metal-credentials (apiToken), then`);
  console.log(`  $ helm install ${RELEASE} charts/metal-l2 -n ${RELEASE_NAMESPACE} ${userValueFlags(values).join(' ')}`);
  state.release = { name: RELEASE, namespace: RELEASE_NAMESPACE };
  saveState();
  const installing = Date.now();
  await installRelease(tools, { chart: join(root, 'charts', 'metal-l2'), values, token: TOKEN });
  await waitReleaseReady(tools, { timeoutMs: 240_000 });
  console.log(
    `  both Deployments Available (their own probes) and their Services answering ${((Date.now() - installing) / 1000).toFixed(1)} s after helm install`,
  );
  waitCrdsEstablished();
  show(['get', 'pods', '-n', RELEASE_NAMESPACE, '-o', 'wide']);
  const services = controllerDeployments().map((name) => {
    const ip = kubectl([
      'get',
      'service',
      `${name}-metrics`,
      '-n',
      RELEASE_NAMESPACE,
      '-o',
      'jsonpath={.spec.clusterIP}:{.spec.ports[0].port}',
    ]);
    return `http://${ip}/metrics (Service ${name}-metrics)`;
  });
  console.log(`\n  simulator ${simUrl} (API ${metalUrl}, request log ${simUrl}/_sim/requests)`);
  console.log(`  metrics: IPAM ${services[0]}, network ${services[1]}`);
}

/** In the cluster the webhooks are the chart's: served by the pods through its Services, with its certificate. */
function chartWebhooks() {
  step("webhooks: the chart's (IPAM pool validation, the PacketMachine pause, template validation), through its Services");
  show(['get', 'validatingwebhookconfigurations,mutatingwebhookconfigurations', '-l', `app.kubernetes.io/instance=${RELEASE}`]);
}

/** The process demo serves the webhooks itself, behind a throw-away CA and a certificate for 127.0.0.1. */
function webhookCertificate() {
  step('webhook serving certificate for 127.0.0.1 (openssl: a throw-away CA, then a serving certificate)');
  const certDir = join(demoDir, 'certs');
  mkdirSync(certDir, { recursive: true });
  /** @param {string[]} args */
  const openssl = (args) => execFileSync('openssl', args, { stdio: 'ignore' });
  openssl([
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-days',
    '30',
    '-subj',
    '/CN=metal-l2-demo-ca',
    '-keyout',
    join(certDir, 'ca.key'),
    '-out',
    join(certDir, 'ca.crt'),
  ]);
  writeFileSync(join(certDir, 'ext.cnf'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  openssl([
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-subj',
    '/CN=localhost',
    '-keyout',
    join(certDir, 'tls.key'),
    '-out',
    join(certDir, 'tls.csr'),
  ]);
  openssl([
    'x509',
    '-req',
    '-in',
    join(certDir, 'tls.csr'),
    '-CA',
    join(certDir, 'ca.crt'),
    '-CAkey',
    join(certDir, 'ca.key'),
    '-CAcreateserial',
    '-days',
    '30',
    '-extfile',
    join(certDir, 'ext.cnf'),
    '-out',
    join(certDir, 'tls.crt'),
  ]);
  const caBundle = readFileSync(join(certDir, 'ca.crt')).toString('base64');
  console.log(`  ${relative(root, certDir)}/tls.crt, tls.key (CA ca.crt)`);
  return { certDir, caBundle };
}

/**
 * The process demo's controllers: their built main.js, as processes on this host.
 * @param {{ certDir: string, metalUrl: string, simUrl: string, ports: Ports }} options
 */
function startControllers({ certDir, metalUrl, simUrl, ports }) {
  const controllerFlags = (/** @type {number} */ metrics, /** @type {number} */ health, /** @type {number} */ webhook) => [
    '--kubeconfig',
    kubeconfig,
    '--leader-elect=false',
    '--metrics-bind-address',
    `127.0.0.1:${metrics}`,
    '--health-probe-bind-address',
    `127.0.0.1:${health}`,
    '--webhook-port',
    String(webhook),
    '--webhook-cert-dir',
    certDir,
    '--metal-api-url',
    metalUrl,
  ];
  startProcess({
    name: 'ipam-controller',
    script: 'packages/ipam-controller/dist/main.js',
    args: [...controllerFlags(ports.ipamMetrics, ports.ipamHealth, ports.ipamWebhook), '--controller-namespace', ns],
  });
  startProcess({
    name: 'network-controller',
    script: 'packages/network-controller/dist/main.js',
    args: [
      ...controllerFlags(ports.netMetrics, ports.netHealth, ports.netWebhook),
      '--metal-credentials-secret',
      `${ns}/metal-credentials`,
      '--metadata-url',
      `${simUrl}/metadata`,
    ],
  });
}

/** @param {Ports} ports */
async function controllersReady(ports) {
  await waitFor('both controllers ready (/readyz)', async () => {
    assertAlive();
    return (await answers(`http://127.0.0.1:${ports.ipamHealth}/readyz`)) && answers(`http://127.0.0.1:${ports.netHealth}/readyz`);
  });
}

/**
 * The webhook configurations the chart would register, at the processes' ports.
 * @param {{ caBundle: string, ports: Ports }} options
 */
function registerWebhooks({ caBundle, ports }) {
  step('webhooks: IPAM pool validation, the PacketMachine pause (mutating), template validation');
  /** @param {{ name: string, port: number, path: string, rule: string }} webhook */
  const hook = ({ name, port, path, rule }) => `  - name: ${name}
    admissionReviewVersions: [v1]
    sideEffects: None
    failurePolicy: Fail
    timeoutSeconds: 10
    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: ${ns}}}
    clientConfig: {url: "https://127.0.0.1:${port}${path}", caBundle: ${caBundle}}
    rules: [${rule}]
`;
  state.webhooks = [
    'validatingwebhookconfiguration/metal-l2-demo-ipam',
    'mutatingwebhookconfiguration/metal-l2-demo-network',
    'validatingwebhookconfiguration/metal-l2-demo-network',
  ];
  saveState();
  apply(
    'webhooks.yaml',
    `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: metal-l2-demo-ipam}
webhooks:
${['inclusterippool', 'globalinclusterippool']
  .map((kind) =>
    hook({
      name: `${kind}.ipam.metal.x-k8s.io`,
      port: ports.ipamWebhook,
      path: `/validate-ipam-metal-x-k8s-io-v1alpha1-${kind}`,
      rule: `{apiGroups: [ipam.metal.x-k8s.io], apiVersions: [v1alpha1], operations: [CREATE, UPDATE, DELETE], resources: [${kind}s]}`,
    }),
  )
  .join('')}---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: metal-l2-demo-network}
webhooks:
${hook({ name: 'packetmachine.network.metal.x-k8s.io', port: ports.netWebhook, path: '/mutate-infrastructure-cluster-x-k8s-io-v1beta1-packetmachine', rule: '{apiGroups: [infrastructure.cluster.x-k8s.io], apiVersions: [v1beta1], operations: [CREATE], resources: [packetmachines]}' })}---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: metal-l2-demo-network}
webhooks:
${hook({ name: 'machinenetworktemplate.network.metal.x-k8s.io', port: ports.netWebhook, path: '/validate-network-metal-x-k8s-io-v1alpha1-machinenetworktemplate', rule: '{apiGroups: [network.metal.x-k8s.io], apiVersions: [v1alpha1], operations: [CREATE, UPDATE], resources: [machinenetworktemplates]}' })}`,
  );
}

// ---------------------------------------------------------------------------------------------

if (!existsSync(kubeconfig)) throw new Error('no .local/kubeconfig: run `npm run cluster:up` first (or `npm run demo`)');
if (existsSync(stateFile)) throw new Error('a demo is already running (.local/demo/state.json): `npm run demo:down` first');
const capiCrds = join(shared, 'upstream-crds', 'cluster-api-v1.14.0');
const cappCrds = join(shared, 'upstream-crds', 'cluster-api-provider-packet');
if (!existsSync(capiCrds))
  throw new Error(`the Cluster API CRDs are read from ${capiCrds}; clone the shared folder beside this repository or set METAL_L2_SHARED`);
const node = inCluster ? await clusterNode() : undefined;
rmSync(demoDir, { recursive: true, force: true });
mkdirSync(manifestDir, { recursive: true });
saveState();

step(
  inCluster
    ? 'CRDs: Cluster API v1.14 and CAPP v0.9 (from ../shared/upstream-crds); ours come with the chart'
    : 'CRDs: Cluster API v1.14 and CAPP v0.9 (from ../shared/upstream-crds), and ours (crds/)',
);
kubectl(['apply', '--server-side', '-f', capiCrds]);
kubectl(['apply', '--server-side', '-f', cappCrds]);
if (node === undefined) {
  kubectl(['apply', '--server-side', '-f', join(root, 'crds')]);
  waitCrdsEstablished();
}
kubectl(['apply', '-f', '-'], `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${ns}}\n`);

const webhookCert = node === undefined ? webhookCertificate() : undefined;

step(
  node === undefined
    ? 'processes (each outlives this script; `npm run demo:down` stops them)'
    : 'processes on this host: the simulator (on the node bridge, where pods reach it) and the CAPP fixture (each outlives this script; `npm run demo:down` stops them)',
);
const ports = {
  sim: await freePort(),
  ipamMetrics: await freePort(),
  ipamHealth: await freePort(),
  ipamWebhook: await freePort(),
  netMetrics: await freePort(),
  netHealth: await freePort(),
  netWebhook: await freePort(),
};
// The simulator: one metro, one 2-port plan, one project with a known id, one token; devices
// provision in 2.5 s instead of 5. In the cluster it listens on the node bridge: the pods reach the
// host there, and so do this host's programs.
const simHost = node?.hostAddress ?? '127.0.0.1';
writeFileSync(
  join(demoDir, 'seed.yaml'),
  `metros: [{code: ${METRO}, name: Dallas, country: US}]\nplans: [{slug: c3.small.x86, ports: 2}]\nprojects: [{name: demo, id: ${PROJECT_ID}}]\ntokens: [{token: ${TOKEN}}]\n`,
);
startProcess({
  name: 'metal-sim',
  script: 'packages/metal-sim/dist/cli.js',
  args: [
    '--port',
    String(ports.sim),
    '--host',
    simHost,
    '--seed',
    'demo',
    '--seed-file',
    join(demoDir, 'seed.yaml'),
    '--device-queued-ms',
    '500',
    '--device-provisioning-ms',
    '2000',
  ],
});
const simUrl = `http://${simHost}:${ports.sim}`;
const metalUrl = `${simUrl}/metal/v1`;
state.simulator = simUrl;
saveState();
/**
 * A Metal API call to the simulator with the demo's token.
 * @param {string} path
 * @param {RequestInit} [init]
 */
const metal = async (path, init = {}) => {
  const res = await fetch(`${metalUrl}${path}`, {
    ...init,
    headers: { 'X-Auth-Token': TOKEN, 'Content-Type': 'application/json', 'User-Agent': 'metal-l2-demo' },
  });
  if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${path}: ${res.status} ${await res.text()}`);
  return res.status === 204 ? undefined : res.json();
};
await waitFor('the simulator', async () => {
  assertAlive();
  return answers(`${simUrl}/_sim/requests?operationId=none`);
});
if (webhookCert !== undefined) startControllers({ certDir: webhookCert.certDir, metalUrl, simUrl, ports });
// CAPP v0.9.0 and the owner-reference part of the CAPI Machine controller, played by the fixture.
writeFileSync(join(demoDir, 'metal-token'), `${TOKEN}\n`, { mode: 0o600 });
startProcess({
  name: 'capp-fixture',
  script: 'packages/capp-fixture/dist/cli.js',
  args: [
    '--kubeconfig',
    kubeconfig,
    '--metal-api-url',
    metalUrl,
    '--metal-token-file',
    join(demoDir, 'metal-token'),
    '--namespace',
    ns,
    '--poll-interval-ms',
    '1000',
  ],
});
if (node === undefined) {
  await controllersReady(ports);
  console.log(`  simulator ${simUrl} (API ${metalUrl}, request log ${simUrl}/_sim/requests)`);
  console.log(`  metrics: IPAM http://127.0.0.1:${ports.ipamMetrics}/metrics, network http://127.0.0.1:${ports.netMetrics}/metrics`);
  registerWebhooks({ caBundle: webhookCert?.caBundle ?? '', ports });
} else {
  await installChart({ metalUrl, simUrl, node });
  chartWebhooks();
}

step('the workload cluster as Cluster API and CAPP would have it (infrastructure marked provisioned: no CAPI Cluster controller runs)');
apply(
  'cluster.yaml',
  `apiVersion: v1
kind: Secret
metadata: {name: metal-credentials, namespace: ${ns}}
stringData: {apiToken: ${TOKEN}}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: PacketCluster
metadata: {name: ${CLUSTER}, namespace: ${ns}}
spec: {projectID: ${PROJECT_ID}, metro: ${METRO}}
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata: {name: ${CLUSTER}, namespace: ${ns}}
spec:
  infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: PacketCluster, name: ${CLUSTER}}
`,
);
// CAPP's PacketCluster controller (which the fixture does not play) reserves the cluster's elastic IP
// first (CPEM, the default vipManager); CAPP v0.9.0 fails every active machine without it.
const endpoint = await reserveClusterEndpoint(createMetalClient({ token: TOKEN, baseUrl: metalUrl, rateLimit: false }), {
  projectId: PROJECT_ID,
  clusterName: CLUSTER,
  metro: METRO,
});
console.log(`  elastic IP ${endpoint.address ?? '?'} reserved for the cluster, as CAPP's PacketCluster controller does`);
kubectl([
  'patch',
  'cluster.cluster.x-k8s.io',
  CLUSTER,
  '-n',
  ns,
  '--subresource=status',
  '--type=merge',
  '-p',
  '{"status":{"initialization":{"infrastructureProvisioned":true}}}',
]);

step('pools: vrf-pool (VLAN 1000, its range in a Metal VRF with a Metal Gateway) and vlan-1001 (plain)');
await metal(`/projects/${PROJECT_ID}/virtual-networks`, {
  method: 'POST',
  body: JSON.stringify({ vxlan: 1001, metro: METRO, description: 'demo vlan 1001' }),
});
console.log('  VLAN 1001 created in the simulator by hand (the VRF-backed pool creates VLAN 1000 itself)');
apply(
  'pools.yaml',
  `apiVersion: ipam.metal.x-k8s.io/v1alpha1
kind: InClusterIPPool
metadata: {name: vrf-pool, namespace: ${ns}}
spec:
  addresses: ["10.60.1.10-10.60.1.200"]
  prefix: 24
  vrf:
    projectID: ${PROJECT_ID}
    metro: ${METRO}
    credentialsSecretRef: {name: metal-credentials}
    create: {name: ${CLUSTER}, ipRanges: ["10.60.0.0/16"], localASN: 65100}
    vxlan: 1000
    metalGateway: true
---
apiVersion: ipam.metal.x-k8s.io/v1alpha1
kind: InClusterIPPool
metadata: {name: vlan-1001, namespace: ${ns}}
spec:
  addresses: ["192.168.11.10-192.168.11.200"]
  prefix: 24
  gateway: 192.168.11.1
`,
);
await waitFor(
  'the VRF-backed pool Ready',
  () =>
    kubectl(['get', 'inclusterippool', 'vrf-pool', '-n', ns, '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}']) === 'True',
);
const vrfStatus = JSON.parse(kubectl(['get', 'inclusterippool', 'vrf-pool', '-n', ns, '-o', 'jsonpath={.status.vrf}']));
// The IPAM controller's Metal client says just `metal-l2` (the network controller's says more).
const simLog = /** @type {{ requests: { userAgent?: string, operationId?: string }[] }} */ (
  await fetch(`${simUrl}/_sim/requests`).then((res) => res.json())
);
const poolCalls = simLog.requests.filter((r) => r.userAgent === 'metal-l2');
console.log(`  vrf-pool Ready after ${poolCalls.length} Metal calls: ${poolCalls.map((r) => r.operationId).join(', ')}`);
console.log(`  status.vrf: ${JSON.stringify(vrfStatus)}`);

step('what the IPAM webhook refuses');
for (const [what, body, args] of [
  [
    'an overlapping pool',
    `apiVersion: ipam.metal.x-k8s.io/v1alpha1\nkind: InClusterIPPool\nmetadata: {name: overlap, namespace: ${ns}}\nspec: {addresses: ["192.168.11.100-192.168.11.250"], prefix: 24}\n`,
    ['apply', '-f', '-'],
  ],
  [
    'a gateway outside the subnet',
    `apiVersion: ipam.metal.x-k8s.io/v1alpha1\nkind: InClusterIPPool\nmetadata: {name: bad-gateway, namespace: ${ns}}\nspec: {addresses: ["192.168.12.10-192.168.12.20"], prefix: 24, gateway: 192.168.13.1}\n`,
    ['apply', '-f', '-'],
  ],
]) {
  try {
    kubectl(/** @type {string[]} */ (args), /** @type {string} */ (body));
    console.log(`  ${what}: unexpectedly accepted`);
  } catch (err) {
    console.log(`  ${what}:\n    ${String(/** @type {{stderr?: unknown}} */ (err).stderr).trim()}`);
  }
}

step('one MachineNetworkTemplate per network mode');
const gw = vrfStatus.gatewayAddress ?? vrfStatus.metalGatewayAddress ?? '10.60.1.1';
const vrfPool = '{apiGroup: ipam.metal.x-k8s.io, kind: InClusterIPPool, name: vrf-pool}';
const plainPool = '{apiGroup: ipam.metal.x-k8s.io, kind: InClusterIPPool, name: vlan-1001}';
/** Each template's name, ports and renderer (ifupdown: Equinix's Debian and Ubuntu; networkd: Flatcar). @type {[string, string, string?][]} */
const templates = [
  ['layer3', `  - name: bond0`],
  [
    'hybrid-bonded',
    `  - name: bond0\n    vlans:\n    - vxlan: 1000\n      addressesFromPools: [${vrfPool}]\n      routes: [{to: 10.60.0.0/16, via: ${gw}}]`,
  ],
  [
    'hybrid',
    `  - name: eth1\n    bonded: false\n    vlans:\n    - {vxlan: 1001, native: true, addressesFromPools: [${plainPool}]}\n    - {vxlan: 1000, addressesFromPools: [${vrfPool}]}`,
  ],
  [
    'layer2-bonded',
    `  - name: bond0\n    layer2: true\n    vlans:\n    - {vxlan: 1000, native: true, addressesFromPools: [${vrfPool}], routes: [{to: default, via: ${gw}}]}\n    - {vxlan: 1001, addressesFromPools: [${plainPool}]}`,
  ],
  [
    'layer2-individual',
    `  - {name: bond0, layer2: true, bonded: false}\n  - name: eth0\n    vlans: [{vxlan: 1000, addressesFromPools: [${vrfPool}]}]\n  - name: eth1\n    vlans: [{vxlan: 1001, addressesFromPools: [${plainPool}]}]`,
  ],
  // Flatcar: hybrid bonded as above, written for systemd-networkd (Afterburn's bond0 there).
  [
    'flatcar-hybrid-bonded',
    `  - name: bond0\n    vlans:\n    - vxlan: 1000\n      addressesFromPools: [${vrfPool}]\n      routes: [{to: 10.60.0.0/16, via: ${gw}}]`,
    'networkd',
  ],
];
apply(
  'templates.yaml',
  templates
    .map(
      ([name, ports, renderer = 'ifupdown']) =>
        `apiVersion: network.metal.x-k8s.io/v1alpha1\nkind: MachineNetworkTemplate\nmetadata: {name: ${name}, namespace: ${ns}}\nspec:\n  os: {renderer: ${renderer}}\n  ports:\n${ports}\n`,
    )
    .join('---\n'),
);
console.log(`  ${templates.map(([name]) => name).join(', ')} (see .local/demo/manifests/templates.yaml)`);

step('machines, as Cluster API makes them: PacketMachine (our webhook pauses it), bootstrap Secret, Machine');
/** @type {[string, string][]} */
const machines = [
  ['l3-0', 'layer3'],
  ['hb-0', 'hybrid-bonded'],
  ['hb-1', 'hybrid-bonded'],
  ['hy-0', 'hybrid'],
  ['l2b-0', 'layer2-bonded'],
  ['l2i-0', 'layer2-individual'],
  ['fc-0', 'flatcar-hybrid-bonded'],
];
/** Flatcar machines: their bootstrap data is CABPK v1.7.9's real Ignition (`format: ignition`). */
const ignitionMachines = new Set(['fc-0']);
/** A CABPK-shaped bootstrap document: Jinja header, kubeadm join, CAPP's Go template action. @param {string} name */
const bootstrap = (name) =>
  [
    '## template: jinja',
    '#cloud-config',
    'runcmd:',
    '  - "MINOR=$(echo {{ .kubernetesVersion }} | cut -d. -f2)"',
    '  - "kubeadm join --config /run/kubeadm/kubeadm-join-config.yaml && echo success > /run/cluster-api/bootstrap-success.complete"',
    `  - "echo ${name} joined"`,
  ]
    .map((line) => `    ${line}`)
    .join('\n');
for (const [name, template] of machines) {
  const labels = `{cluster.x-k8s.io/cluster-name: ${CLUSTER}}`;
  const file = join(manifestDir, `machine-${name}.yaml`);
  writeFileSync(
    file,
    `apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: PacketMachine
metadata:
  name: ${name}
  namespace: ${ns}
  labels: ${labels}
  annotations: {network.metal.x-k8s.io/template: ${template}}
spec: {machineType: c3.small.x86, metro: ${METRO}, os: ${ignitionMachines.has(name) ? 'flatcar_stable' : 'ubuntu_22_04'}, billingCycle: hourly}
---
# Bootstrap data of a Machine without a bootstrap config (no CABPK here): labelled, so the chart's
# Secret policy lets the network controller write its key value (CABPK's are owned by a KubeadmConfig).
apiVersion: v1
kind: Secret
metadata:
  name: ${name}-bootstrap
  namespace: ${ns}
  labels: {cluster.x-k8s.io/cluster-name: ${CLUSTER}, network.metal.x-k8s.io/bootstrap-data: "true"}
type: cluster.x-k8s.io/secret
stringData:
  format: ${ignitionMachines.has(name) ? 'ignition' : 'cloud-config'}
  value: |
${ignitionMachines.has(name) ? `    ${cabpkIgnition().trim()}` : bootstrap(name)}
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: Machine
metadata: {name: ${name}, namespace: ${ns}, labels: ${labels}}
spec:
  clusterName: ${CLUSTER}
  version: v1.30.4
  bootstrap: {dataSecretName: ${name}-bootstrap}
  infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: PacketMachine, name: ${name}}
`,
  );
  // What the API server stored on create, after our mutating webhook (the pause is lifted soon after).
  const created = kubectl([
    'create',
    '-f',
    file,
    '-o',
    'jsonpath={.kind} {.metadata.annotations.network\\.metal\\.x-k8s\\.io/hold}{"\\n"}',
  ]);
  const hold =
    created
      .split('\n')
      .find((line) => line.startsWith('PacketMachine '))
      ?.slice('PacketMachine '.length)
      .trim() || undefined;
  console.log(
    `  ${name.padEnd(6)} template ${template.padEnd(18)} ${hold === undefined ? 'NOT paused by the webhook' : `paused by our webhook on create (cluster.x-k8s.io/paused + hold ${hold})`}`,
  );
}

step('following the machines (MachineNetwork Ready condition; every change is printed)');
/** @typedef {{ metadata: { name: string }, status?: { networkType?: string, deviceID?: string, addresses?: { port: string, vxlan: number, address: string, prefix: number }[], conditions?: { type: string, status: string, reason?: string }[] } }} MachineNetwork */
/** @type {Map<string, string>} */
const lastSeen = new Map();
/** @type {Set<string>} */
const bootScriptPlayed = new Set();
/** @type {MachineNetwork[]} */
let mns = [];
/** @param {MachineNetwork | undefined} mn @param {string} type */
const cond = (mn, type) => mn?.status?.conditions?.find((c) => c.type === type);
await waitFor(
  'every MachineNetwork Ready',
  async () => {
    assertAlive();
    mns = JSON.parse(kubectl(['get', 'machinenetworks', '-n', ns, '-o', 'json'])).items;
    for (const [name] of machines) {
      const mn = mns.find((m) => m.metadata.name === name);
      const ready = cond(mn, 'Ready');
      const now =
        mn === undefined
          ? 'no MachineNetwork yet'
          : ready === undefined
            ? 'no conditions yet'
            : ready.status === 'True'
              ? 'Ready'
              : `${ready.reason}`;
      if (lastSeen.get(name) !== now) {
        lastSeen.set(name, now);
        console.log(`  [${elapsed()}] ${name.padEnd(6)} ${now}`);
      }
      // Layer-2 modes take the metadata service away, so the controller waits until the boot
      // script says it has what it needs. No guest OS runs in this demo: post that event for it.
      if (
        cond(mn, 'PortsConfigured')?.reason === 'WaitingForBootScript' &&
        !bootScriptPlayed.has(name) &&
        mn?.status?.deviceID !== undefined
      ) {
        bootScriptPlayed.add(name);
        const res = await fetch(`${simUrl}/metadata/${mn.status.deviceID}/events`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ state: 'running', code: 1001, message: 'metal-l2: metadata captured' }),
        });
        console.log(
          `  [${elapsed()}] ${name.padEnd(6)} no guest OS runs in this demo: posted the boot script's user-state event 1001 ("metadata captured") to the simulator for device ${mn.status.deviceID} (answer ${res.status})`,
        );
      }
    }
    return machines.every(([name]) => lastSeen.get(name) === 'Ready');
  },
  240_000,
);

step(`all ${machines.length} machines Ready after ${elapsed().trim()}`);
/** @typedef {{ name?: string, network_type?: string, data?: { bonded?: boolean }, virtual_networks?: { vxlan?: number }[], native_virtual_network?: { vxlan?: number } }} Port */
const rows = [['MACHINE', 'MODE', 'ADDRESSES', 'VLANS PER PORT (simulator)', 'METAL CALLS', 'READY']];
for (const [name] of machines) {
  const mn = mns.find((m) => m.metadata.name === name);
  const deviceId = mn?.status?.deviceID ?? '';
  const device = /** @type {{ network_ports?: Port[] }} */ (
    await metal(`/devices/${deviceId}?include=network_ports.virtual_networks,network_ports.native_virtual_network`)
  );
  const vlans = (device.network_ports ?? [])
    .filter((p) => (p.virtual_networks ?? []).length > 0)
    .map((p) => {
      const native = p.native_virtual_network?.vxlan;
      const ids = (p.virtual_networks ?? []).map((v) => v.vxlan ?? 0).sort((a, b) => a - b);
      return `${p.name}: ${ids.map((id) => (id === native ? `${id} (native)` : String(id))).join(', ')}`;
    });
  const calls = /** @type {{ count: number }} */ (
    await fetch(`${simUrl}/_sim/requests?deviceId=${deviceId}&userAgent=${CONTROLLER_AGENT}`).then((res) => res.json())
  );
  const addresses = (mn?.status?.addresses ?? []).map((a) => `${a.port}.${a.vxlan} ${a.address}/${a.prefix}`);
  rows.push([
    name,
    mn?.status?.networkType ?? '?',
    addresses.join(', ') || '-',
    vlans.join('; ') || '- (bond0 layer 3 only)',
    String(calls.count),
    cond(mn, 'Ready')?.status ?? '?',
  ]);
}
const widths = (rows[0] ?? []).map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
for (const row of rows) console.log(`  ${row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ')}`.trimEnd());
console.log("  (METAL CALLS: the network controller's calls on that device, from the simulator's request log)");
// The Flatcar machine's bootstrap data stays Ignition: CABPK's entries kept, ours appended to them.
for (const name of ignitionMachines) {
  /** @typedef {{ ignition: { version: string }, storage?: { files?: { path: string }[] }, systemd?: { units?: { name: string }[] } }} Ignition */
  const cabpk = /** @type {Ignition} */ (JSON.parse(cabpkIgnition()));
  const value = kubectl(['get', 'secret', `${name}-bootstrap`, '-n', ns, '-o', 'jsonpath={.data.value}']);
  const injected = /** @type {Ignition} */ (JSON.parse(Buffer.from(value, 'base64').toString('utf8')));
  const had = new Set([...(cabpk.storage?.files ?? []).map((f) => f.path), ...(cabpk.systemd?.units ?? []).map((u) => u.name)]);
  const added = [
    ...(injected.storage?.files ?? []).map((f) => f.path),
    ...(injected.systemd?.units ?? []).map((u) => `unit ${u.name}`),
  ].filter((what) => !had.has(what.replace(/^unit /, '')));
  console.log(
    `  ${name} (Flatcar, bootstrap format ignition): CABPK v1.7.9's Ignition ${cabpk.ignition.version} stays Ignition ${injected.ignition.version}; ours added: ${added.join(', ')}`,
  );
}

show(['get', 'machinenetworks', '-n', ns]);
show(['get', 'inclusterippools', '-n', ns]);

step('the demo is up: explore it with kubectl');
console.log(`  export KUBECONFIG=${kubeconfig}
  export PATH=${join(local, 'bin')}:$PATH
  kubectl get machinenetworks -n ${ns}
  kubectl get inclusterippools -n ${ns}
  kubectl get ipaddressclaims.ipam.cluster.x-k8s.io,ipaddresses.ipam.cluster.x-k8s.io -n ${ns}
  kubectl get machinenetwork hy-0 -n ${ns} -o yaml          # addresses, ports, conditions
  kubectl get secret hy-0-bootstrap -n ${ns} -o jsonpath='{.data.value}' | base64 -d   # the injected user data
  kubectl get secret fc-0-bootstrap -n ${ns} -o jsonpath='{.data.value}' | base64 -d   # Flatcar: CABPK's Ignition, ours added
  curl -s '${simUrl}/_sim/requests?userAgent=${CONTROLLER_AGENT}'   # every Metal call the controller made
${
  node === undefined
    ? ''
    : `  kubectl get deployments,pods,services -n ${RELEASE_NAMESPACE}          # the controllers, installed by helm
  kubectl logs -n ${RELEASE_NAMESPACE} deployment/${controllerDeployments()[1]} | tail   # through the kubelet
  helm list -n ${RELEASE_NAMESPACE}
`
}
  manifests: .local/demo/manifests/   logs: .local/demo/*.log
  stop everything (${node === undefined ? 'controllers' : 'the helm release'}, fixture, simulator, ${node === undefined ? 'control plane' : 'node and control plane'}): npm run demo:down`);
