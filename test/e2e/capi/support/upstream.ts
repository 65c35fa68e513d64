// The real upstream programs for the e2e:capi suite: Cluster API v1.7.9 core, CABPK and KCP, and
// CAPP v0.9.0, built by hack/build-capi.sh into the versioned cache, their CRDs and webhook
// configurations read from where they ship (the Go module cache, ../shared), and each manager
// started as a process with the flags its release manifest gives it.

import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as k8s from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { freePort } from '@metal-l2/local-control-plane';
import { repoRoot, requireShared } from '@metal-l2/test-support/paths';
import { waitFor } from '@metal-l2/test-support/wait-for';

const run = promisify(execFile);

export const CAPI_VERSION = 'v1.7.9';
export const CAPP_VERSION = 'v0.9.0';

export type UpstreamName = 'capi' | 'cabpk' | 'kcp' | 'capp';

export interface UpstreamBuild {
  readonly binDir: string;
  /** $(go env GOMODCACHE)/sigs.k8s.io/cluster-api@v1.7.9 */
  readonly capiModule: string;
  readonly cappSource: string;
}

/** Runs hack/build-capi.sh (returns at once when cached; a cold build takes minutes). */
export async function buildUpstream(): Promise<UpstreamBuild> {
  const script = join(repoRoot, 'hack', 'build-capi.sh');
  let stdout: string;
  try {
    ({ stdout } = await run('bash', [script], { maxBuffer: 64 * 1024 * 1024, timeout: 60 * 60 * 1000 }));
  } catch (err: unknown) {
    const stderr = (err as { stderr?: string }).stderr ?? '';
    const reason = stderr
      .split('\n')
      .filter((l) => l.includes('[build-capi]'))
      .slice(-3)
      .join('\n');
    throw new Error(
      `building Cluster API ${CAPI_VERSION} and CAPP ${CAPP_VERSION} with ${script} failed; run it by hand to see why\n${reason}`,
      { cause: err },
    );
  }
  const binDir = stdout.trim().split('\n').pop() ?? '';
  const { stdout: modcache } = await run('go', ['env', 'GOMODCACHE']);
  const shared = requireShared('running the real CAPP');
  return {
    binDir,
    capiModule: join(modcache.trim(), 'sigs.k8s.io', `cluster-api@${CAPI_VERSION}`),
    cappSource: join(shared, 'upstream-src', `cluster-api-provider-packet-${CAPP_VERSION}`),
  };
}

type Crd = k8s.V1CustomResourceDefinition;

async function readYamlDocs<T>(file: string): Promise<T[]> {
  return parseAllDocuments(await readFile(file, 'utf8'))
    .map((d) => d.toJS() as T | null)
    .filter((d): d is T => d !== null);
}

async function crdsIn(dir: string): Promise<Crd[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.yaml')).sort();
  const all = await Promise.all(files.map((f) => readYamlDocs<Crd>(join(dir, f))));
  return all.flat().filter((c) => c.kind === 'CustomResourceDefinition');
}

/**
 * Label Cluster API requires on provider CRDs: CAPI's own releases (CABPK and KCP included) and
 * CAPP's add it through kustomize `commonLabels`; the bases in the module cache and ../shared lack it.
 */
export const CONTRACT_LABEL = { 'cluster.x-k8s.io/v1beta1': 'v1beta1' } as const;

/** CAPI v1.7.9's CRDs (core, CABPK, KCP) from the module cache and CAPP's bases, each with the contract label as released. */
export async function upstreamCapiCrds(build: UpstreamBuild): Promise<Crd[]> {
  const dirs = ['config/crd/bases', 'bootstrap/kubeadm/config/crd/bases', 'controlplane/kubeadm/config/crd/bases'].map((d) =>
    join(build.capiModule, d),
  );
  dirs.push(join(requireShared('installing CAPP CRDs'), 'upstream-crds', 'cluster-api-provider-packet'));
  const crds = (await Promise.all(dirs.map(crdsIn))).flat();
  return crds.map((c) => ({ ...c, metadata: { ...c.metadata, labels: { ...c.metadata?.labels, ...CONTRACT_LABEL } } }));
}

interface WebhookManifest {
  kind: 'MutatingWebhookConfiguration' | 'ValidatingWebhookConfiguration';
  metadata: { name: string };
  webhooks: { clientConfig: { service?: { path?: string }; url?: string; caBundle?: string } }[];
}

/** Where each program's webhook configurations ship. */
function webhookManifest(build: UpstreamBuild, name: UpstreamName): string {
  switch (name) {
    case 'capi':
      return join(build.capiModule, 'config', 'webhook', 'manifests.yaml');
    case 'cabpk':
      return join(build.capiModule, 'bootstrap', 'kubeadm', 'config', 'webhook', 'manifests.yaml');
    case 'kcp':
      return join(build.capiModule, 'controlplane', 'kubeadm', 'config', 'webhook', 'manifests.yaml');
    case 'capp':
      return join(build.cappSource, 'config', 'webhook', 'manifests.yaml');
  }
}

/**
 * Registers a program's own webhook configurations, as its release does, except that each
 * webhook calls the process on 127.0.0.1:port instead of an in-cluster Service (what the
 * release's kustomize + cert-manager would fill in).
 */
export async function registerUpstreamWebhooks(
  kc: k8s.KubeConfig,
  build: UpstreamBuild,
  name: UpstreamName,
  port: number,
  caBundle: string,
): Promise<void> {
  const api = kc.makeApiClient(k8s.AdmissionregistrationV1Api);
  for (const doc of await readYamlDocs<WebhookManifest>(webhookManifest(build, name))) {
    const webhooks = doc.webhooks.map((w) => ({
      ...w,
      clientConfig: { url: `https://127.0.0.1:${port}${w.clientConfig.service?.path ?? '/'}`, caBundle },
    }));
    const body = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: doc.kind,
      metadata: { name: `${name}-${doc.metadata.name}` },
      webhooks,
    };
    if (doc.kind === 'MutatingWebhookConfiguration')
      await api.createMutatingWebhookConfiguration({ body: body as k8s.V1MutatingWebhookConfiguration });
    else await api.createValidatingWebhookConfiguration({ body: body as k8s.V1ValidatingWebhookConfiguration });
  }
}

export interface UpstreamManager {
  readonly name: UpstreamName;
  readonly webhookPort: number;
  readonly healthPort: number;
  readonly logFile: string;
  readonly args: readonly string[];
  stop(): Promise<void>;
}

const BINARIES: Record<UpstreamName, string> = { capi: 'capi-manager', cabpk: 'cabpk-manager', kcp: 'kcp-manager', capp: 'capp-manager' };

/**
 * The flags of each release manifest (config/manager/manager.yaml, defaults of its ${VAR:=...}),
 * minus leader election: a single replica outside a cluster, and controller-runtime cannot find
 * a lease namespace there (CAPI v1.7.9's managers have no flag for it). One gate differs from the
 * release: KubeadmBootstrapFormatIgnition (alpha, off by default) is on in CABPK and KCP, as a
 * Flatcar user sets it (EXP_KUBEADM_BOOTSTRAP_FORMAT_IGNITION=true), so a KubeadmConfig may say
 * `format: ignition`; it changes nothing for the cloud-config ones.
 */
function releaseArgs(name: UpstreamName): string[] {
  switch (name) {
    case 'capi':
      return [
        '--use-deprecated-infra-machine-naming=false',
        '--feature-gates=MachinePool=true,ClusterResourceSet=true,ClusterTopology=false,RuntimeSDK=false,MachineSetPreflightChecks=false',
      ];
    case 'cabpk':
      return ['--feature-gates=MachinePool=true,KubeadmBootstrapFormatIgnition=true', '--bootstrap-token-ttl=15m'];
    case 'kcp':
      return [
        '--use-deprecated-infra-machine-naming=false',
        '--feature-gates=MachinePool=true,ClusterTopology=false,KubeadmBootstrapFormatIgnition=true',
      ];
    case 'capp':
      return [];
  }
}

export interface StartManagerOptions {
  readonly build: UpstreamBuild;
  readonly name: UpstreamName;
  readonly kubeconfig: string;
  readonly certDir: string;
  readonly logDir: string;
  readonly env?: Readonly<Record<string, string>>;
}

/** Starts one manager and waits until its /readyz answers (webhook server up). */
export async function startUpstreamManager(options: StartManagerOptions): Promise<UpstreamManager> {
  const { name } = options;
  const binary = join(options.build.binDir, BINARIES[name]);
  if (!existsSync(binary)) throw new Error(`${binary} is missing: run hack/build-capi.sh`);
  const [webhookPort, healthPort, metricsPort] = [await freePort(), await freePort(), await freePort()];
  const args = [
    ...releaseArgs(name),
    '--leader-elect=false',
    `--kubeconfig=${options.kubeconfig}`,
    `--webhook-port=${webhookPort}`,
    `--webhook-cert-dir=${options.certDir}`,
    `--health-addr=127.0.0.1:${healthPort}`,
    `--diagnostics-address=127.0.0.1:${metricsPort}`,
    '--insecure-diagnostics=true',
    '--v=4',
  ];
  const logFile = join(options.logDir, `${name}.log`);
  const log = createWriteStream(logFile, { flags: 'w' });
  // A clean environment: no proxy for anyone but CAPP (which gets it through `env`).
  const baseEnv: Record<string, string> = {
    PATH: process.env['PATH'] ?? '',
    HOME: process.env['HOME'] ?? '/tmp',
    POD_NAMESPACE: `${name}-system`,
    POD_NAME: `${name}-controller-manager-0`,
    POD_UID: '00000000-0000-4000-8000-000000000000',
  };
  const child: ChildProcess = spawn(binary, args, { env: { ...baseEnv, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  let exited: string | undefined;
  child.on('exit', (code, signal) => {
    exited = `exited with ${code ?? signal ?? 'unknown'}`;
  });
  await waitFor(
    `${name} manager ready (log: ${logFile})`,
    async () => {
      if (exited !== undefined) throw new Error(`${name} ${exited}; see ${logFile}`);
      const res = await fetch(`http://127.0.0.1:${healthPort}/readyz`).catch(() => undefined);
      return res?.status === 200;
    },
    { timeoutMs: 60_000, intervalMs: 250 },
  ).catch((err: unknown) => {
    child.kill('SIGKILL');
    throw err;
  });
  return {
    name,
    webhookPort,
    healthPort,
    logFile,
    args,
    stop: async () => {
      if (exited !== undefined) return;
      const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await gone;
      clearTimeout(timer);
      log.end();
    },
  };
}
