import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { importOciLayout } from './node-images.js';
import { delay } from './processes.js';

// The chart installed on a node the way a user installs it: the image `npm run image` built,
// imported into the node's containerd under a name of its own, and `helm install` with only the
// values a user sets. test/node and `npm run demo -- --in-cluster` both go through here.

const run = promisify(execFile);

/** The name the image is imported under; the chart gets it as image.repository and image.tag. */
export const IMAGE_REPOSITORY = 'metal-l2.local/metal-l2';
export const RELEASE = 'metal-l2';
export const RELEASE_NAMESPACE = 'metal-l2-system';

/** The chart's two Deployments (and the prefix of their Services) for a release. */
export function controllerDeployments(release: string = RELEASE): readonly [string, string] {
  return [`${release}-ipam`, `${release}-network`];
}

/** An image build-image.js wrote: its OCI layout, the tag in it, and what image.json says. */
export interface BuiltImage {
  readonly layoutDir: string;
  readonly tag: string;
  /** The OCI manifest digest build-image.js reports. */
  readonly ociDigest: string;
  readonly compressedBytes: number;
  readonly uncompressedBytes: number;
}

/** The image in `outDir` (build-image.js --out, .local/image by default), from its image.json. */
export async function readBuiltImage(outDir: string): Promise<BuiltImage> {
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

/** Imports a built image into the node's containerd as `<IMAGE_REPOSITORY>:<tag>`; returns containerd's digest. */
export async function importImage(containerdSocket: string, image: BuiltImage, tag: string = image.tag): Promise<string> {
  return importOciLayout(containerdSocket, { layoutDir: image.layoutDir, tag: image.tag, reference: `${IMAGE_REPOSITORY}:${tag}` });
}

/** What a user sets, and nothing else. */
export interface UserValues {
  /** The tag the image was imported under (IMAGE_REPOSITORY:tag), pulled Never. */
  readonly imageTag: string;
  /** The Metal API base URL both controllers call (the simulator on the host, at the bridge address). */
  readonly metalApiUrl: string;
  readonly metadataUrl: string;
  /** The Secret (key apiToken) in the release namespace with the network controller's default token. */
  readonly credentialsSecret: string;
}

/** The `--set` flags of a user's `helm install`. */
export function userValueFlags(values: UserValues): string[] {
  const set = (key: string, value: string): string[] => ['--set', `${key}=${value}`];
  return [
    ...set('image.repository', IMAGE_REPOSITORY),
    ...set('image.tag', values.imageTag),
    ...set('image.pullPolicy', 'Never'),
    ...set('ipam.metalApiUrl', values.metalApiUrl),
    ...set('network.metalApiUrl', values.metalApiUrl),
    ...set('network.metadataUrl', values.metadataUrl),
    ...set('network.metalCredentials.secretName', values.credentialsSecret),
  ];
}

/** The programs and the cluster a release is installed with. */
export interface ReleaseTools {
  readonly kubectl: string;
  readonly helm: string;
  readonly kubeconfig: string;
}

export interface InstallOptions {
  readonly chart: string;
  readonly values: UserValues;
  /** The credentials Secret's apiToken: passed on stdin, never on a command line. */
  readonly token: string;
  readonly release?: string;
  readonly namespace?: string;
}

/**
 * What a user does: the release namespace and the credentials Secret (kubectl apply), then
 * `helm install` with the user's values. Returns once Helm has created the objects; wait for the
 * pods with waitReleaseReady.
 */
export async function installRelease(tools: ReleaseTools, options: InstallOptions): Promise<void> {
  const namespace = options.namespace ?? RELEASE_NAMESPACE;
  const secret = {
    apiVersion: 'v1',
    kind: 'List',
    items: [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } },
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: options.values.credentialsSecret, namespace },
        stringData: { apiToken: options.token },
      },
    ],
  };
  await withInput(tools.kubectl, ['--kubeconfig', tools.kubeconfig, 'apply', '-f', '-'], JSON.stringify(secret));
  await run(
    tools.helm,
    [
      ...['--kubeconfig', tools.kubeconfig, 'install', options.release ?? RELEASE, options.chart, '-n', namespace],
      ...userValueFlags(options.values),
    ],
    { maxBuffer: 16 * 1024 * 1024, timeout: 300_000 },
  );
}

/** `helm uninstall --wait`: the release's objects are gone when it returns (the CRDs stay, as Helm documents). */
export async function uninstallRelease(tools: ReleaseTools, options: { release?: string; namespace?: string } = {}): Promise<void> {
  await run(
    tools.helm,
    [
      ...['--kubeconfig', tools.kubeconfig, 'uninstall', options.release ?? RELEASE],
      ...['-n', options.namespace ?? RELEASE_NAMESPACE, '--wait', '--timeout=120s'],
    ],
    { timeout: 180_000 },
  );
}

/** The fields of a Deployment that say whether it is Available (k8s.V1Deployment fits). */
export interface DeploymentView {
  readonly metadata?: { readonly name?: string; readonly generation?: number };
  readonly spec?: { readonly replicas?: number };
  readonly status?: {
    readonly conditions?: readonly { readonly type: string; readonly status: string }[];
    readonly observedGeneration?: number;
    readonly replicas?: number;
    readonly updatedReplicas?: number;
    readonly readyReplicas?: number;
    readonly availableReplicas?: number;
  };
}

/** Available (the Deployment's own condition) with every replica updated and ready. */
export function deploymentAvailable(d: DeploymentView | undefined): boolean {
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

interface ServiceView {
  readonly metadata: { readonly name: string };
  readonly spec?: { readonly clusterIP?: string; readonly ports?: readonly { readonly port: number }[] };
}

/**
 * Both Deployments Available (through the pods' own probes), then every Service of the release
 * taking connections on its cluster IP: kube-proxy follows the EndpointSlices a moment after the
 * pods are Ready, and until then the chart's webhooks (failurePolicy Fail) refuse every object.
 * Throws after `timeoutMs` with what the Deployments and pods show.
 */
export async function waitReleaseReady(
  tools: ReleaseTools,
  options: { release?: string; namespace?: string; timeoutMs?: number } = {},
): Promise<{ readonly deployments: readonly DeploymentView[] }> {
  const release = options.release ?? RELEASE;
  const namespace = options.namespace ?? RELEASE_NAMESPACE;
  const deadline = Date.now() + (options.timeoutMs ?? 180_000);
  const get = async <T>(what: string): Promise<T[]> => {
    const { stdout } = await run(tools.kubectl, [
      ...['--kubeconfig', tools.kubeconfig, 'get', what, '-n', namespace],
      ...['-l', `app.kubernetes.io/instance=${release}`, '-o', 'json'],
    ]);
    return (JSON.parse(stdout) as { items: T[] }).items;
  };
  for (;;) {
    const deployments = await get<DeploymentView>('deployments').catch(() => []);
    const names = controllerDeployments(release);
    const available = names.every((name) => deploymentAvailable(deployments.find((d) => d.metadata?.name === name)));
    if (available && (await allAnswer(await get<ServiceView>('services')))) return { deployments };
    if (Date.now() > deadline) {
      const pods = await run(tools.kubectl, ['--kubeconfig', tools.kubeconfig, 'get', 'pods', '-n', namespace, '-o', 'wide']).catch(
        (err: unknown) => ({ stdout: String(err) }),
      );
      throw new Error(
        `release ${release} not ready: ${available ? 'a Service takes no connection' : 'Deployments not Available'}; ` +
          `${JSON.stringify(deployments.map((d) => ({ name: d.metadata?.name, status: d.status })))}\n${pods.stdout}`,
      );
    }
    await delay(500);
  }
}

async function allAnswer(services: readonly ServiceView[]): Promise<boolean> {
  const targets = services.flatMap((s) => (s.spec?.ports ?? []).map((p) => ({ host: s.spec?.clusterIP ?? '', port: p.port })));
  if (targets.length === 0) return false;
  const results = await Promise.all(targets.map(({ host, port }) => connects(host, port)));
  return results.every(Boolean);
}

function connects(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: 2_000 });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => done(true));
    socket.once('timeout', () => done(false));
    socket.once('error', () => done(false));
  });
}

function withInput(command: string, args: readonly string[], input: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = execFile(command, args, { timeout: 60_000 }, (err: Error | null, _stdout, stderr) =>
      err === null ? resolve() : reject(new Error(`${command} ${args.join(' ')}: ${String(stderr).trim() || err.message}`)),
    );
    child.stdin?.end(input);
  });
}
