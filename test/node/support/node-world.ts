import { execFile } from 'node:child_process';
import { cp, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type * as k8s from '@kubernetes/client-node';
import {
  importOciLayout,
  resolveBinaries,
  resolveNodeBinaries,
  startNodeCluster,
  type Binaries,
  type NodeClusterState,
} from '@metal-l2/local-control-plane';
import { repoRoot } from '@metal-l2/test-support/paths';
import { testClustersDir } from '@metal-l2/test-support/test-control-planes';

const run = promisify(execFile);

/** The name the image is imported under; the chart gets it as image.repository and image.tag. */
export const IMAGE_REPOSITORY = 'metal-l2.local/metal-l2';

export interface BuiltImage {
  readonly layoutDir: string;
  readonly tag: string;
  /** The OCI manifest digest build-image.js reports. */
  readonly ociDigest: string;
  readonly compressedBytes: number;
  readonly uncompressedBytes: number;
}

/**
 * `npm run image` into a directory of this test's own (test/image builds .local/image at the same
 * time in another worker).
 */
export async function buildImage(outDir: string): Promise<BuiltImage> {
  await run(process.execPath, [join(repoRoot, 'hack/build-image.js'), '--out', outDir, '--no-archive'], {
    cwd: repoRoot,
    timeout: 900_000,
    maxBuffer: 16 * 1024 * 1024,
  });
  const info = JSON.parse(await readFile(join(outDir, 'image.json'), 'utf8')) as {
    reference: string;
    digest: string;
    compressedBytes: number;
    uncompressedBytes: number;
  };
  return {
    layoutDir: join(outDir, 'oci'),
    tag: info.reference.split(':').pop() ?? '',
    ociDigest: info.digest,
    compressedBytes: info.compressedBytes,
    uncompressedBytes: info.uncompressedBytes,
  };
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
}

/** A one-node cluster owned by this jest worker (a later run's sweep stops it if the worker dies). */
export async function startNodeWorld(): Promise<NodeWorld> {
  const [binaries, nodeBinaries] = await Promise.all([resolveBinaries(repoRoot), resolveNodeBinaries(repoRoot)]);
  const stateDir = join(testClustersDir, `node-${process.pid}-${Date.now()}`);
  const cluster = await startNodeCluster({ binaries, nodeBinaries, stateDir, ownerPid: process.pid });
  return { cluster, stateDir, binaries };
}

/** Imports a built image into the node's containerd under `<IMAGE_REPOSITORY>:<tag>`; returns containerd's digest. */
export async function importImage(world: NodeWorld, image: BuiltImage, tag = image.tag): Promise<string> {
  return importOciLayout(world.cluster.node.containerdSocket, {
    layoutDir: image.layoutDir,
    tag: image.tag,
    reference: `${IMAGE_REPOSITORY}:${tag}`,
  });
}

export async function kubectl(world: NodeWorld, args: readonly string[]): Promise<string> {
  const { stdout } = await run(world.binaries.kubectl, ['--kubeconfig', world.cluster.kubeconfig, ...args], {
    maxBuffer: 16 * 1024 * 1024,
    timeout: 180_000,
  });
  return stdout;
}

export async function helm(world: NodeWorld, args: readonly string[]): Promise<string> {
  const { stdout } = await run(join(world.binaries.dir, 'helm'), ['--kubeconfig', world.cluster.kubeconfig, ...args], {
    maxBuffer: 16 * 1024 * 1024,
    timeout: 300_000,
  });
  return stdout;
}

/** Available (the Deployment's own condition) with every replica updated and ready. */
export function deploymentAvailable(d: k8s.V1Deployment | undefined): boolean {
  if (d === undefined) return false;
  const available = d.status?.conditions?.find((c) => c.type === 'Available')?.status === 'True';
  const want = d.spec?.replicas ?? 1;
  return (
    available &&
    (d.status?.observedGeneration ?? 0) >= (d.metadata?.generation ?? 1) &&
    d.status?.updatedReplicas === want &&
    d.status.readyReplicas === want &&
    d.status.availableReplicas === want &&
    (d.status.replicas ?? 0) === want
  );
}
