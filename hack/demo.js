// The demo, on the local control plane `npm run cluster:up` started (.local/kubeconfig): installs
// the CRDs, runs the IPAM controller with its validating webhook, creates a pool and claims the
// way Cluster API would, shows the result and what the webhook refuses, then stops the controller.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startSimulator } from '@metal-l2/metal-sim';

const root = fileURLToPath(new URL('../', import.meta.url));
const local = join(root, '.local');
const kubeconfig = join(local, 'kubeconfig');
const demoDir = join(local, 'demo');
const shared = process.env.METAL_L2_SHARED ?? join(root, '..', 'shared');
const ns = 'demo';

const kubectl = (args, input) =>
  execFileSync(join(local, 'bin', 'kubectl'), ['--kubeconfig', kubeconfig, ...args], { encoding: 'utf8', input, stdio: ['pipe', 'pipe', 'pipe'] });
const show = (args) => {
  console.log(`\n$ kubectl ${args.join(' ')}`);
  console.log(kubectl(args).trimEnd());
};
const step = (text) => console.log(`\n== ${text}`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(what, probe, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await probe()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(250);
  }
}

if (!existsSync(kubeconfig)) throw new Error('no .local/kubeconfig: run `npm run cluster:up` first');
const capiCrds = join(shared, 'upstream-crds', 'cluster-api-v1.14.0');
if (!existsSync(capiCrds)) throw new Error(`the Cluster API CRDs are read from ${capiCrds}; clone the shared folder beside this repository or set METAL_L2_SHARED`);
mkdirSync(demoDir, { recursive: true });

step('Cluster API IPAM CRDs (from ../shared) and metal-l2 CRDs');
kubectl(['apply', '--server-side', '-f', capiCrds]);
kubectl(['apply', '--server-side', '-f', join(root, 'crds')]);
kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd/ipaddressclaims.ipam.cluster.x-k8s.io', 'crd/inclusterippools.ipam.metal.x-k8s.io']);
kubectl(['apply', '-f', '-'], `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${ns}}\n`);

step('webhook serving certificate (openssl) and the IPAM controller');
const certDir = join(demoDir, 'certs');
mkdirSync(certDir, { recursive: true });
const openssl = (args) => execFileSync('openssl', args, { stdio: 'ignore' });
openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '30', '-subj', '/CN=metal-l2-demo-ca', '-keyout', join(certDir, 'ca.key'), '-out', join(certDir, 'ca.crt')]);
writeFileSync(join(certDir, 'ext.cnf'), 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
openssl(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', '/CN=127.0.0.1', '-keyout', join(certDir, 'tls.key'), '-out', join(certDir, 'tls.csr')]);
openssl(['x509', '-req', '-in', join(certDir, 'tls.csr'), '-CA', join(certDir, 'ca.crt'), '-CAkey', join(certDir, 'ca.key'), '-CAcreateserial', '-days', '30', '-extfile', join(certDir, 'ext.cnf'), '-out', join(certDir, 'tls.crt')]);
step('the Equinix Metal API simulator (the service itself was retired in 2026)');
const sim = await startSimulator({ seed: 'demo' });
const metal = (path) => fetch(`${sim.baseUrl}${path}`, { headers: { 'X-Auth-Token': 'sim-token' } }).then((res) => res.json());
const projectID = (await metal('/projects')).projects[0].id;
console.log(`simulator at ${sim.baseUrl}, project ${projectID}`);
const webhookPort = 19443;
const logFile = join(demoDir, 'ipam-controller.log');
const controller = spawn(
  process.execPath,
  [
    join(root, 'packages', 'ipam-controller', 'dist', 'main.js'),
    '--kubeconfig', kubeconfig,
    '--leader-elect', '--leader-election-namespace', 'default',
    '--metrics-bind-address', '127.0.0.1:18080',
    '--health-probe-bind-address', '127.0.0.1:18081',
    '--webhook-port', String(webhookPort),
    '--webhook-cert-dir', certDir,
    '--metal-api-url', sim.baseUrl,
    '--controller-namespace', 'default',
  ],
  { stdio: ['ignore', openSync(logFile, 'w'), openSync(logFile, 'a')] },
);
const caBundle = readFileSync(join(certDir, 'ca.crt')).toString('base64');
const hook = (kind, plural) => `  - name: ${kind}.ipam.metal.x-k8s.io
    admissionReviewVersions: [v1]
    sideEffects: None
    failurePolicy: Fail
    clientConfig: {url: "https://127.0.0.1:${webhookPort}/validate-ipam-metal-x-k8s-io-v1alpha1-${kind}", caBundle: ${caBundle}}
    rules: [{apiGroups: [ipam.metal.x-k8s.io], apiVersions: [v1alpha1], operations: [CREATE, UPDATE, DELETE], resources: [${plural}]}]
`;
try {
  await waitFor('the controller to be ready (/readyz)', () =>
    fetch('http://127.0.0.1:18081/readyz').then(
      (res) => res.ok,
      () => false,
    ),
  );
  kubectl(['apply', '-f', '-'], `apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata: {name: metal-l2-demo}\nwebhooks:\n${hook('inclusterippool', 'inclusterippools')}${hook('globalinclusterippool', 'globalinclusterippools')}`);
  console.log(`controller logs: ${logFile}; metrics: http://127.0.0.1:18080/metrics`);

  step('a pool, and five claims as Cluster API would create them for five machines');
  kubectl(['apply', '-f', '-'], `apiVersion: ipam.metal.x-k8s.io/v1alpha1
kind: InClusterIPPool
metadata: {name: vlan-1000, namespace: ${ns}}
spec:
  addresses: ["192.168.10.10-192.168.10.50"]
  prefix: 24
  gateway: 192.168.10.1
  excludedAddresses: ["192.168.10.12"]
`);
  const claims = [1, 2, 3, 4, 5]
    .map((i) => `apiVersion: ipam.cluster.x-k8s.io/v1beta2
kind: IPAddressClaim
metadata: {name: md-0-machine-${i}-bond0-1000, namespace: ${ns}}
spec:
  poolRef: {apiGroup: ipam.metal.x-k8s.io, kind: InClusterIPPool, name: vlan-1000}
`)
    .join('---\n');
  kubectl(['apply', '-f', '-'], claims);
  await waitFor('five md-0 IPAddresses', () => kubectl(['get', 'ipaddresses.ipam.cluster.x-k8s.io', '-n', ns, '-o', 'name']).split('\n').filter((n) => n.includes('/md-0-')).length === 5);
  show(['get', 'inclusterippools', '-n', ns]);
  show(['get', 'ipaddresses.ipam.cluster.x-k8s.io', '-n', ns, '-o', 'custom-columns=NAME:.metadata.name,ADDRESS:.spec.address,PREFIX:.spec.prefix,GATEWAY:.spec.gateway']);
  show(['get', 'inclusterippool', 'vlan-1000', '-n', ns, '-o', 'jsonpath={.status.allocations}']);
  console.log();

  step('what the webhook refuses');
  for (const [what, body, args] of [
    ['an overlapping pool', `apiVersion: ipam.metal.x-k8s.io/v1alpha1\nkind: InClusterIPPool\nmetadata: {name: overlap, namespace: ${ns}}\nspec: {addresses: ["192.168.10.40-192.168.10.60"], prefix: 24}\n`, ['apply', '-f', '-']],
    ['shrinking the pool below its allocations', undefined, ['patch', 'inclusterippool', 'vlan-1000', '-n', ns, '--type=merge', '-p', '{"spec":{"addresses":["192.168.10.30-192.168.10.50"]}}']],
    ['deleting the pool while claims hold addresses', undefined, ['delete', 'inclusterippool', 'vlan-1000', '-n', ns, '--wait=false']],
  ]) {
    try {
      kubectl(args, body);
      console.log(`${what}: unexpectedly accepted`);
    } catch (err) {
      console.log(`${what}:\n  ${String(err.stderr).trim()}`);
    }
  }

  step('a VRF-backed pool: its range lives in an Equinix Metal VRF, with a VLAN and a Metal Gateway');
  kubectl(['apply', '-f', '-'], `apiVersion: v1
kind: Secret
metadata: {name: metal-credentials, namespace: ${ns}}
stringData: {apiToken: sim-token}
---
apiVersion: ipam.metal.x-k8s.io/v1alpha1
kind: InClusterIPPool
metadata: {name: vrf-pool, namespace: ${ns}}
spec:
  addresses: ["10.60.1.10-10.60.1.200"]
  prefix: 24
  vrf:
    projectID: ${projectID}
    metro: da
    credentialsSecretRef: {name: metal-credentials}
    create: {name: demo-cluster, ipRanges: ["10.60.0.0/16"], localASN: 65100}
    vxlan: 1000
    metalGateway: true
`);
  await waitFor('the VRF-backed pool Ready', () => kubectl(['get', 'inclusterippool', 'vrf-pool', '-n', ns, '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}']) === 'True');
  show(['get', 'inclusterippool', 'vrf-pool', '-n', ns, '-o', 'jsonpath={.status.vrf}']);
  console.log();
  show(['get', 'inclusterippool', 'vrf-pool', '-n', ns, '-o', 'jsonpath={range .status.conditions[*]}{.type}={.status} {.reason}: {.message}{"\\n"}{end}']);
  const calls = Object.entries(sim.requests.countByOperation({ excludeFaults: true })).filter(([op]) => op !== 'findProjects');
  console.log(`Metal calls the pool cost: ${calls.map(([op, n]) => `${op} ${n}`).join(', ')}`);
  kubectl(['apply', '-f', '-'], [1, 2].map((i) => `apiVersion: ipam.cluster.x-k8s.io/v1beta2
kind: IPAddressClaim
metadata: {name: vrf-machine-${i}, namespace: ${ns}}
spec:
  poolRef: {apiGroup: ipam.metal.x-k8s.io, kind: InClusterIPPool, name: vrf-pool}
`).join('---\n'));
  await waitFor('two VRF addresses', () => kubectl(['get', 'ipaddresses.ipam.cluster.x-k8s.io', '-n', ns, 'vrf-machine-1', 'vrf-machine-2', '-o', 'name', '--ignore-not-found']).trim().split('\n').filter(Boolean).length === 2);
  show(['get', 'ipaddresses.ipam.cluster.x-k8s.io', '-n', ns, 'vrf-machine-1', 'vrf-machine-2', '-o', 'custom-columns=NAME:.metadata.name,ADDRESS:.spec.address,GATEWAY:.spec.gateway']);

  step('releasing: delete two claims; their addresses go back to the pool');
  kubectl(['delete', 'ipaddressclaims.ipam.cluster.x-k8s.io', '-n', ns, 'md-0-machine-1-bond0-1000', 'md-0-machine-2-bond0-1000']);
  await waitFor('three md-0 IPAddresses', () => kubectl(['get', 'ipaddresses.ipam.cluster.x-k8s.io', '-n', ns, '-o', 'name']).split('\n').filter((n) => n.includes('/md-0-')).length === 3);
  show(['get', 'inclusterippools', '-n', ns]);
  show(['get', 'ipaddressclaims.ipam.cluster.x-k8s.io', '-n', ns, '-o', 'custom-columns=NAME:.metadata.name,READY:.status.conditions[?(@.type=="Ready")].reason']);
} finally {
  kubectl(['delete', 'validatingwebhookconfiguration', 'metal-l2-demo', '--ignore-not-found']);
  controller.kill('SIGTERM');
  await sim.close();
}
console.log('\nThe control plane keeps running with the demo objects: explore with');
console.log(`  .local/bin/kubectl --kubeconfig .local/kubeconfig get inclusterippools,ipaddressclaims,ipaddresses -n ${ns}`);
console.log('Stop it with: npm run cluster:down');
