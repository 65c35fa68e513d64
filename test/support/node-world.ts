import { execFile } from 'node:child_process';
import { cp, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  readBuiltImage,
  resolveBinaries,
  resolveNodeBinaries,
  startNodeCluster,
  type Binaries,
  type BuiltImage,
  type NodeClusterState,
  type ReleaseTools,
} from '@metal-l2/local-control-plane';
import { repoRoot } from './paths.js';
import { testClustersDir } from './test-control-planes.js';

// A one-node cluster and the image for the suites that install the chart on it (test/node, and
// test/demo's in-cluster demo). Importing the image and installing the chart are the package's
// (release.ts), shared with `npm run demo -- --in-cluster`.

const run = promisify(execFile);

/**
 * One node at a time per machine (node-lock.ts): a suite that starts one while another worker's
 * suite has its node waits this long for it, rather than failing.
 */
const NODE_LOCK_WAIT_MS = 15 * 60_000;

/**
 * `npm run image` into a directory of the test's own (test/image builds .local/image at the same
 * time in another worker).
 */
export async function buildImage(outDir: string): Promise<BuiltImage> {
  await run(process.execPath, [join(repoRoot, 'hack/build-image.js'), '--out', outDir, '--no-archive'], {
    cwd: repoRoot,
    timeout: 900_000,
    maxBuffer: 16 * 1024 * 1024,
  });
  return readBuiltImage(outDir);
}

/**
 * The image rebuilt as a release pipeline would re-tag a rebuild: the same layers under a new
 * config (another revision label), so another manifest digest. (A second build-image.js run with
 * another SOURCE_DATE_EPOCH would change the cached base's recipe and rebuild it from Debian, minutes.)
 */
export async function rebuildImage(image: BuiltImage, outDir: string, revision: string): Promise<BuiltImage> {
  await cp(image.layoutDir, join(outDir, 'oci'), { recursive: true });
  const layoutDir = join(outDir, 'oci');
  await run('umoci', [
    'config',
    '--image',
    `${layoutDir}:${image.tag}`,
    '--tag',
    revision,
    '--config.label',
    `org.opencontainers.image.revision=${revision}`,
  ]);
  const index = JSON.parse(await readFile(join(layoutDir, 'index.json'), 'utf8')) as {
    manifests: { digest: string; annotations?: Record<string, string> }[];
  };
  const entry = index.manifests.find((m) => m.annotations?.['org.opencontainers.image.ref.name'] === revision);
  if (entry === undefined) throw new Error(`umoci wrote no ${revision} tag in ${layoutDir}`);
  return { ...image, layoutDir, tag: revision, ociDigest: entry.digest };
}

export interface NodeWorld {
  readonly cluster: NodeClusterState;
  readonly stateDir: string;
  readonly binaries: Binaries;
  /** kubectl, helm and the admin kubeconfig, for release.ts. */
  readonly tools: ReleaseTools;
}

/**
 * A one-node cluster owned by this jest worker (a later run's sweep stops it if the worker dies),
 * under .local/test-clusters/<label>-<pid>-<time in base 36>: its state, containerd's root and the kubelet's
 * directory are its own; the host-wide names (bridge, CIDRs, iptables chains) wait for the lock.
 */
export async function startNodeWorld(label = 'node'): Promise<NodeWorld> {
  const [binaries, nodeBinaries] = await Promise.all([resolveBinaries(repoRoot), resolveNodeBinaries(repoRoot)]);
  // Short: containerd's sockets live under it, and a unix socket path has at most 104 bytes.
  const stateDir = join(testClustersDir, `${label}-${process.pid}-${Date.now().toString(36)}`);
  const cluster = await startNodeCluster({ binaries, nodeBinaries, stateDir, ownerPid: process.pid, lockWaitMs: NODE_LOCK_WAIT_MS });
  const tools = { kubectl: binaries.kubectl, helm: binaries.helm, kubeconfig: cluster.kubeconfig };
  return { cluster, stateDir, binaries, tools };
}

export async function kubectl(world: NodeWorld, args: readonly string[]): Promise<string> {
  const { stdout } = await run(world.tools.kubectl, ['--kubeconfig', world.tools.kubeconfig, ...args], {
    maxBuffer: 16 * 1024 * 1024,
    timeout: 180_000,
  });
  return stdout;
}

export async function helm(world: NodeWorld, args: readonly string[]): Promise<string> {
  const { stdout } = await run(world.tools.helm, ['--kubeconfig', world.tools.kubeconfig, ...args], {
    maxBuffer: 16 * 1024 * 1024,
    timeout: 300_000,
  });
  return stdout;
}
