// The releases of the reference in-cluster IPAM provider the bench compares against, newest
// first: what each speaks (targets.js), the CRDs its control plane needs, and its flags. v1.0.3's
// CRDs are the copies in ../shared/upstream-crds; v1.1.0's are read at bench time from the Go
// module cache (its own module, and the cluster-api module its go.mod requires), never copied
// into this repository.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { crdDirs } from './cluster.js';
import { referenceV1_0, referenceV1_1 } from './targets.js';

const run = promisify(execFile);

const IN_CLUSTER_MODULE = 'sigs.k8s.io/cluster-api-ipam-provider-in-cluster';
const CAPI_MODULE = 'sigs.k8s.io/cluster-api';

/** `go mod download -json module@version`: the module's folder in the cache and its go.mod file. */
async function goModule(module, version) {
  const { stdout } = await run('go', ['mod', 'download', '-json', `${module}@${version}`], {
    maxBuffer: 4 * 1024 * 1024,
    timeout: 10 * 60 * 1000,
    // Outside any module, so no go.mod around the bench decides anything.
    cwd: '/',
    env: { ...process.env, GOFLAGS: '-mod=mod' },
  });
  const info = JSON.parse(stdout);
  if (info.Error !== undefined) throw new Error(`go mod download ${module}@${version}: ${info.Error}`);
  return { dir: info.Dir, goMod: info.GoMod };
}

/** The version of `module` a go.mod file requires. */
async function requiredVersion(goModFile, module) {
  const text = await readFile(goModFile, 'utf8');
  const escaped = module.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const found = new RegExp(`^\\s*(?:require\\s+)?${escaped}\\s+(v\\S+)`, 'm').exec(text);
  if (found === null) throw new Error(`${goModFile} does not require ${module}`);
  return found[1];
}

/**
 * v1.1.0's CRDs: its four pool kinds (its controllers watch all of them) from its module, and from
 * the cluster-api release its go.mod requires the IPAM CRDs and Cluster (the claim reconciler
 * watches Clusters). Returns the sources for installCrds and a line saying where they came from.
 */
async function inClusterV1_1Crds() {
  const provider = await goModule(IN_CLUSTER_MODULE, 'v1.1.0');
  const capiVersion = await requiredVersion(provider.goMod, CAPI_MODULE);
  const capi = await goModule(CAPI_MODULE, capiVersion);
  const bases = (dir) => join(dir, 'config', 'crd', 'bases');
  return {
    sources: [
      {
        dir: bases(capi.dir),
        files: ['cluster.x-k8s.io_clusters.yaml', 'ipam.cluster.x-k8s.io_ipaddressclaims.yaml', 'ipam.cluster.x-k8s.io_ipaddresses.yaml'],
      },
      bases(provider.dir),
    ],
    origin: `${IN_CLUSTER_MODULE}@v1.1.0/config/crd/bases and ${CAPI_MODULE}@${capiVersion}/config/crd/bases (Go module cache)`,
  };
}

/**
 * `flags(config)` are the command line of each release with `config` as the kubeconfig: webhooks,
 * metrics, health probes and leader election off, one namespace watched. v1.1.0 serves metrics on
 * --diagnostics-address (cluster-api's manager flags) and has no --metrics-bind-address.
 */
export const REFERENCES = [
  {
    version: 'v1.1.0',
    target: referenceV1_1,
    crds: inClusterV1_1Crds,
    flags: (config, namespace) => [
      `--kubeconfig=${config}`,
      `--namespace=${namespace}`,
      '--leader-elect=false',
      '--diagnostics-address=0',
      '--health-probe-bind-address=0',
      '--webhook-port=0',
    ],
  },
  {
    version: 'v1.0.3',
    target: referenceV1_0,
    crds: async () => ({
      sources: [crdDirs.capiV1_10(), crdDirs.inCluster()],
      origin: '../shared/upstream-crds/cluster-api-v1.10.10 and cluster-api-ipam-provider-in-cluster',
    }),
    flags: (config, namespace) => [
      `--kubeconfig=${config}`,
      `--namespace=${namespace}`,
      '--leader-elect=false',
      '--metrics-bind-address=0',
      '--health-probe-bind-address=0',
      '--webhook-port=0',
    ],
  },
];
