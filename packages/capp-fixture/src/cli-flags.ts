// The flags of metal-l2-capp-fixture. Pure: main() passes argv and the environment in.
import { parseArgs } from 'node:util';
import { CAPI_CORE_VERSIONS, type CapiCoreVersion } from '@metal-l2/api';

export interface CappFixtureFlags {
  readonly kubeconfig?: string | undefined;
  readonly metalApiUrl: string;
  /** The token itself (from --metal-token-file or METAL_TOKEN), or a file to read it from. */
  readonly token: { readonly kind: 'file'; readonly path: string } | { readonly kind: 'value'; readonly value: string };
  readonly namespace?: string | undefined;
  readonly capiVersion?: CapiCoreVersion | undefined;
  readonly playMachineController: boolean;
  readonly pollIntervalMs?: number | undefined;
  readonly logLevel: string;
  readonly logFormat: 'json' | 'text';
}

export const usage = `metal-l2-capp-fixture: plays Cluster API Provider Packet v0.9.0 (and the owner-reference part of
the CAPI v1.7 Machine controller) against a Kubernetes API server and the Metal simulator. Dev only.

  --kubeconfig PATH             kubeconfig to use (default: $KUBECONFIG, ~/.kube/config)
  --metal-api-url URL           Metal API base URL, e.g. the simulator's http://127.0.0.1:8080/metal/v1 (required)
  --metal-token-file PATH       file holding the Metal API token (else the METAL_TOKEN environment variable)
  --namespace NS                watch one namespace (default: all)
  --capi-version v1beta1|v1beta2  Cluster API version of Machines and Clusters (default: discovered)
  --no-machine-controller       do not play the Machine controller (run the real one instead)
  --poll-interval-ms N          look at a provisioning device again after N ms (default 10000, as CAPP)
  --log-level LEVEL             error|warn|info|debug (default info)
  --log-format json|text        (default text)
`;

const isCapiVersion = (v: string): v is CapiCoreVersion => (CAPI_CORE_VERSIONS as readonly string[]).includes(v);

/** Parses argv (without node and script). Throws with a message naming the bad flag. */
export function parseFlags(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): CappFixtureFlags | 'help' {
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    options: {
      kubeconfig: { type: 'string' },
      'metal-api-url': { type: 'string' },
      'metal-token-file': { type: 'string' },
      namespace: { type: 'string' },
      'capi-version': { type: 'string' },
      'no-machine-controller': { type: 'boolean', default: false },
      'poll-interval-ms': { type: 'string' },
      'log-level': { type: 'string', default: 'info' },
      'log-format': { type: 'string', default: 'text' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help === true) return 'help';
  const metalApiUrl = values['metal-api-url'];
  if (metalApiUrl === undefined || metalApiUrl === '') throw new Error('--metal-api-url is required');
  try {
    new URL(metalApiUrl);
  } catch {
    throw new Error(`--metal-api-url: "${metalApiUrl}" is not a URL`);
  }
  const tokenFile = values['metal-token-file'];
  const envToken = env['METAL_TOKEN'];
  let token: CappFixtureFlags['token'];
  if (tokenFile !== undefined && tokenFile !== '') token = { kind: 'file', path: tokenFile };
  else if (envToken !== undefined && envToken.trim() !== '') token = { kind: 'value', value: envToken.trim() };
  else throw new Error('no Metal token: pass --metal-token-file or set METAL_TOKEN');
  const capiVersion = values['capi-version'];
  if (capiVersion !== undefined && !isCapiVersion(capiVersion))
    throw new Error(`--capi-version must be one of ${CAPI_CORE_VERSIONS.join(', ')}`);
  const poll = values['poll-interval-ms'];
  let pollIntervalMs: number | undefined;
  if (poll !== undefined) {
    pollIntervalMs = Number(poll);
    if (!Number.isInteger(pollIntervalMs) || pollIntervalMs < 1)
      throw new Error(`--poll-interval-ms must be a positive integer, not "${poll}"`);
  }
  const logFormat = values['log-format'];
  if (logFormat !== 'json' && logFormat !== 'text') throw new Error('--log-format must be json or text');
  return {
    kubeconfig: values.kubeconfig,
    metalApiUrl,
    token,
    namespace: values.namespace,
    capiVersion,
    playMachineController: values['no-machine-controller'] !== true,
    pollIntervalMs,
    logLevel: values['log-level'],
    logFormat,
  };
}
