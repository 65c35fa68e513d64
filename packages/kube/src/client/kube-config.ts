import { readFileSync } from 'node:fs';
import { isIPv6 } from 'node:net';
import type https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

const serviceAccountDir = '/var/run/secrets/kubernetes.io/serviceaccount';
const serviceAccountNamespaceFile = `${serviceAccountDir}/namespace`;

/**
 * What the client needs of a kubeconfig: the server, and TLS material and credentials applied to
 * each request (read again every time, so rotated tokens keep working). client-node's KubeConfig
 * is one (tests hand theirs in); loadKubeConfig returns a lighter one when it can.
 */
export interface ClusterAccess {
  getCurrentCluster(): { readonly server: string } | null;
  applyToHTTPSOptions(options: https.RequestOptions): Promise<void>;
}

/** The only kubeconfig fields the light loader understands; anything else goes to client-node. */
interface SimpleAccess {
  readonly server: string;
  readonly ca?: { readonly file?: string; readonly data?: string };
  readonly insecureSkipTlsVerify?: boolean;
  readonly tlsServerName?: string;
  readonly token?: string;
  readonly tokenFile?: string;
  readonly cert?: { readonly file?: string; readonly data?: string };
  readonly key?: { readonly file?: string; readonly data?: string };
}

const tokenFileRereadMs = 60_000;

/**
 * A ClusterAccess for the common cases, built on node:https alone: client-node's KubeConfig module
 * loads all of client-node's generated API (about 70 MiB of a controller's resident memory) just
 * to read a kubeconfig. Applies the same options client-node does for these fields: CA, client
 * certificate and key (files read per request), insecure-skip-tls-verify, tls-server-name, and a
 * bearer token (the service account's token file is read again once a minute, as client-go and
 * client-node do).
 */
class SimpleClusterAccess implements ClusterAccess {
  private token: { value: string; readAt: number } | undefined;

  constructor(private readonly access: SimpleAccess) {}

  getCurrentCluster(): { readonly server: string } {
    return { server: this.access.server };
  }

  applyToHTTPSOptions(options: https.RequestOptions): Promise<void> {
    const { access } = this;
    if (access.insecureSkipTlsVerify === true) options.rejectUnauthorized = false;
    if (access.tlsServerName !== undefined) options.servername = access.tlsServerName;
    const ca = material(access.ca);
    if (ca !== undefined) options.ca = ca;
    const cert = material(access.cert);
    if (cert !== undefined) options.cert = cert;
    const key = material(access.key);
    if (key !== undefined) options.key = key;
    const token = this.currentToken();
    if (token !== undefined)
      options.headers = { ...(options.headers as Record<string, string> | undefined), Authorization: `Bearer ${token}` };
    return Promise.resolve();
  }

  private currentToken(): string | undefined {
    if (this.access.token !== undefined) return this.access.token;
    if (this.access.tokenFile === undefined) return undefined;
    const now = Date.now();
    if (this.token === undefined || now - this.token.readAt > tokenFileRereadMs) {
      // A token file written by hand often ends in a newline; a header must not.
      this.token = { value: readFileSync(this.access.tokenFile, 'utf8').trim(), readAt: now };
    }
    return this.token.value;
  }
}

/** Inline base64 data wins over a file, as in client-node. */
function material(source: { readonly file?: string; readonly data?: string } | undefined): Buffer | undefined {
  if (source?.data !== undefined) return Buffer.from(source.data, 'base64');
  if (source?.file !== undefined) return readFileSync(source.file);
  return undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const clusterFields = new Set([
  'server',
  'certificate-authority',
  'certificate-authority-data',
  'insecure-skip-tls-verify',
  'tls-server-name',
]);
const userFields = new Set(['token', 'token-file', 'client-certificate', 'client-certificate-data', 'client-key', 'client-key-data']);

function stringField(record: Record<string, unknown>, name: string): string | undefined {
  const value = record[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * The current context of a kubeconfig document as SimpleAccess, or undefined when it uses
 * anything the light loader leaves to client-node: exec or auth-provider credentials, basic auth,
 * impersonation, a proxy, extensions, or a shape it does not expect. `dir` resolves relative paths.
 */
export function simpleAccessOf(doc: unknown, dir: string): SimpleAccess | undefined {
  if (!isRecord(doc) || typeof doc['current-context'] !== 'string') return undefined;
  const named = (list: unknown, name: unknown, field: string): Record<string, unknown> | undefined => {
    if (!Array.isArray(list) || typeof name !== 'string') return undefined;
    const entry: unknown = list.find((e: unknown) => isRecord(e) && e['name'] === name);
    return isRecord(entry) && isRecord(entry[field]) ? entry[field] : undefined;
  };
  const context = named(doc['contexts'], doc['current-context'], 'context');
  if (context === undefined) return undefined;
  const cluster = named(doc['clusters'], context['cluster'], 'cluster');
  const user = named(doc['users'], context['user'], 'user');
  if (cluster === undefined || user === undefined) return undefined;
  if (Object.keys(cluster).some((k) => !clusterFields.has(k)) || Object.keys(user).some((k) => !userFields.has(k))) return undefined;
  const server = stringField(cluster, 'server');
  if (server === undefined) return undefined;
  const path = (name: string, record: Record<string, unknown>): string | undefined => {
    const value = stringField(record, name);
    return value === undefined || value.startsWith('/') ? value : `${dir}/${value}`;
  };
  const source = (record: Record<string, unknown>, file: string): { file?: string; data?: string } | undefined => {
    const data = stringField(record, `${file}-data`);
    const filePath = path(file, record);
    if (data === undefined && filePath === undefined) return undefined;
    return { ...(data === undefined ? {} : { data }), ...(filePath === undefined ? {} : { file: filePath }) };
  };
  const ca = source(cluster, 'certificate-authority');
  const cert = source(user, 'client-certificate');
  const key = source(user, 'client-key');
  // A token-file of a kubeconfig is read once, at load, as client-node does.
  const tokenFile = stringField(user, 'token-file');
  const token = stringField(user, 'token') ?? (tokenFile === undefined ? undefined : readFileSync(tokenFile, 'utf8'));
  const tlsServerName = stringField(cluster, 'tls-server-name');
  return {
    server: server.replace(/\/$/, ''),
    ...(ca === undefined ? {} : { ca }),
    ...(cluster['insecure-skip-tls-verify'] === true ? { insecureSkipTlsVerify: true } : {}),
    ...(tlsServerName === undefined ? {} : { tlsServerName }),
    ...(token === undefined ? {} : { token }),
    ...(cert === undefined ? {} : { cert }),
    ...(key === undefined ? {} : { key }),
  };
}

/** The pod's service account: the API server's Service from the environment, CA and token from the mount. */
function inClusterAccess(serviceAccountDir: string): SimpleAccess {
  const host = process.env['KUBERNETES_SERVICE_HOST'] ?? '';
  const port = process.env['KUBERNETES_SERVICE_PORT'] ?? '';
  const scheme = port === '80' || port === '8080' || port === '8001' ? 'http' : 'https';
  return {
    server: `${scheme}://${isIPv6(host) ? `[${host}]` : host}:${port}`,
    ca: { file: `${serviceAccountDir}/ca.crt` },
    tokenFile: `${serviceAccountDir}/token`,
  };
}

async function clientNodeKubeConfig(load: (kc: KubeConfig) => void): Promise<KubeConfig> {
  const { KubeConfig: Config } = await import('@kubernetes/client-node');
  const kc = new Config();
  load(kc);
  return kc;
}

/**
 * The kubeconfig a controller binary uses: the file given by `--kubeconfig`; otherwise the
 * pod's service account when running in a cluster; otherwise the default kubeconfig
 * ($KUBECONFIG, ~/.kube/config), through client-node. A file whose current context needs more
 * than a token, client certificate and CA (exec plugins, auth providers, proxies, ...) is read by
 * client-node too, loaded only then. Called from main, which owns the environment.
 */
export async function loadKubeConfig(
  options: { kubeconfig?: string | undefined; /** Tests point this at their own mount. */ serviceAccountDir?: string } = {},
): Promise<ClusterAccess> {
  const file = options.kubeconfig;
  if (file !== undefined && file !== '') {
    const { parse } = await import('yaml');
    const text = readFileSync(file, 'utf8');
    const slash = file.lastIndexOf('/');
    const simple = simpleAccessOf(parse(text), slash < 0 ? '.' : file.slice(0, slash) || '/');
    return simple === undefined ? clientNodeKubeConfig((kc) => kc.loadFromFile(file)) : new SimpleClusterAccess(simple);
  }
  if ((process.env['KUBERNETES_SERVICE_HOST'] ?? '') !== '')
    return new SimpleClusterAccess(inClusterAccess(options.serviceAccountDir ?? serviceAccountDir));
  return clientNodeKubeConfig((kc) => kc.loadFromDefault());
}

/**
 * The namespace to keep the leader-election Lease in when none is configured: the pod's own
 * (service account mount), else the kubeconfig context's, else "default".
 */
export function defaultNamespace(kc: KubeConfig): string {
  try {
    const fromPod = readFileSync(serviceAccountNamespaceFile, 'utf8').trim();
    if (fromPod !== '') return fromPod;
  } catch {
    // Not in a pod.
  }
  return kc.getContextObject(kc.getCurrentContext())?.namespace ?? 'default';
}
