// A fresh local control plane per benchmark (etcd + kube-apiserver + kube-controller-manager from
// @metal-l2/local-control-plane), CRD installation from YAML folders, and small waits.
import { existsSync } from 'node:fs';
import { cp, readFile, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { startOwnedControlPlane, stopControlPlane, sweepOrphanedControlPlanes } from '@metal-l2/local-control-plane';
import { parseAllDocuments } from 'yaml';
import { Api, resourcePath } from './api.js';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const parentDir = join(tmpdir(), 'metal-l2-bench');
/** Controller logs and the control planes' logs of each run stay here for a post-mortem. */
export const benchLogDir = join(tmpdir(), 'metal-l2-bench-logs');

/** ../shared beside the clone, or METAL_L2_SHARED. */
export function sharedDir() {
  const dir = resolve(process.env['METAL_L2_SHARED'] ?? join(repoRoot, '..', 'shared'));
  if (!existsSync(join(dir, 'upstream-crds'))) {
    throw new Error(
      `the upstream CRDs are read from ${dir}/upstream-crds: clone the shared folder beside this repository or set METAL_L2_SHARED`,
    );
  }
  return dir;
}

export const crdDirs = {
  capiV1_14: () => join(sharedDir(), 'upstream-crds', 'cluster-api-v1.14.0'),
  capiV1_10: () => join(sharedDir(), 'upstream-crds', 'cluster-api-v1.10.10'),
  inCluster: () => join(sharedDir(), 'upstream-crds', 'cluster-api-ipam-provider-in-cluster'),
  capp: () => join(sharedDir(), 'upstream-crds', 'cluster-api-provider-packet'),
  ours: () => join(repoRoot, 'crds'),
};

/** Polls probe() until it returns something other than undefined/false; for setup, never for figures. */
export async function waitUntil(what, probe, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await sleep(100);
  }
}

const running = new Set();

/** Starts a fresh control plane owned by this process; stop it with cluster.stop(). */
export async function startCluster(label) {
  await sweepOrphanedControlPlanes(parentDir);
  const owned = await startOwnedControlPlane({ repoRoot, parentDir, label });
  const api = new Api(owned.state);
  const cluster = {
    api,
    server: owned.state.server,
    kubeconfig: owned.state.kubeconfig,
    stateDir: owned.stateDir,
    apiserverLog: join(owned.state.logDir, 'kube-apiserver.log'),
    /** name -> pid of etcd, kube-apiserver, kube-controller-manager. */
    pids: Object.fromEntries(owned.state.processes.map((p) => [p.name, p.pid])),
    /** Stops it and keeps its logs (etcd, kube-apiserver, kube-controller-manager) in the bench log folder. */
    stop: async () => {
      running.delete(cluster);
      api.close();
      const kept = join(benchLogDir, `${label}-${new Date().toISOString().replace(/[:.]/g, '-')}-control-plane`);
      await cp(owned.state.logDir, kept, { recursive: true }).catch(() => undefined);
      await stopControlPlane(owned.stateDir);
    },
  };
  running.add(cluster);
  return cluster;
}

/** For an interrupted run: stops every control plane this process started. */
export async function stopAllClusters() {
  await Promise.all([...running].map((c) => c.stop().catch(() => undefined)));
}

/**
 * The CRDs of one source: a folder (every YAML file in it), or { dir, files } for some files of a
 * folder (a Go module's config/crd/bases holds more than a bench needs).
 */
async function readCrds(source) {
  const dir = typeof source === 'string' ? source : source.dir;
  const all = (await readdir(dir)).filter((f) => f.endsWith('.yaml') || f.endsWith('.yml')).sort();
  const files = typeof source === 'string' ? all : source.files;
  const missing = files.filter((f) => !all.includes(f));
  if (missing.length > 0) throw new Error(`${dir} has no ${missing.join(', ')}`);
  const crds = [];
  for (const file of files) {
    for (const doc of parseAllDocuments(await readFile(join(dir, file), 'utf8'))) {
      const value = doc.toJS();
      if (value?.kind === 'CustomResourceDefinition') crds.push(value);
    }
  }
  return crds;
}

/** Creates the CRDs of each source (see readCrds) and waits until each is Established and served in discovery. */
export async function installCrds(api, sources) {
  const crds = (await Promise.all(sources.map(readCrds))).flat();
  const path = resourcePath({ group: 'apiextensions.k8s.io', version: 'v1', plural: 'customresourcedefinitions' });
  for (const crd of crds) await api.post(path, crd);
  for (const crd of crds) {
    await waitUntil(`CRD ${crd.metadata.name} Established`, async () => {
      const current = await api.get(`${path}/${crd.metadata.name}`);
      return (current.status?.conditions ?? []).some((c) => c.type === 'Established' && c.status === 'True');
    });
    for (const version of crd.spec.versions.filter((v) => v.served)) {
      await waitUntil(`${crd.spec.names.plural}.${crd.spec.group}/${version.name} in discovery`, async () => {
        const res = await api.send('GET', `/apis/${crd.spec.group}/${version.name}`);
        return res.status === 200 && (res.json.resources ?? []).some((r) => r.name === crd.spec.names.plural);
      });
    }
  }
  return crds.length;
}

export async function createNamespace(api, name) {
  await api.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  return name;
}
