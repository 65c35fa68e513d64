import { parseArgs } from 'node:util';
import { intFlag, normalizeBooleanFlags, readRuntimeFlags, runtimeFlagOptions, urlFlag, type RuntimeFlags } from '@metal-l2/kube';
import { DEFAULT_BASE_URL, DEFAULT_RATE_LIMIT, formatRateLimit, rateLimitFlag, type RateLimitOptions } from '@metal-l2/metal-api';
import { validateClusterIdentity } from './cluster-identity.js';
import { DEFAULT_STATUS_BUDGET_BYTES, MAX_STATUS_BUDGET_BYTES } from './pool/status-budget.js';
import { DEFAULT_BLOCK_SIZE, MAX_BLOCK_SIZE, isPowerOfTwo, maxBlockSizeFor } from './block/block-layout.js';

/** The controller's flags: the runtime's shared ones (packages/kube) plus the IPAM provider's own. */
export type IpamFlags = RuntimeFlags & {
  readonly leaderElectionId: string;
  readonly webhookPort: number;
  readonly webhookCertDir: string;
  /** Base URL of the Equinix Metal API (a simulator in tests and demos). */
  readonly metalApiUrl: string;
  /** Client-side limit on Metal requests, per API token; false: none. */
  readonly metalRateLimit: RateLimitOptions | false;
  /** Where global pools' credentials Secrets live by default; the pod's namespace when absent. */
  readonly controllerNamespace?: string | undefined;
  /** How often a ready VRF-backed pool's Metal side is checked again for drift. */
  readonly vrfResyncSeconds: number;
  /** The management cluster's identity on Metal tags; absent: the kube-system Namespace UID. */
  readonly clusterIdentity?: string | undefined;
  /** Size budget of one object holding allocations (an IPAddressBlock): --block-size must fit it. */
  readonly poolStatusBudgetBytes: number;
  /** Addresses per IPAddressBlock for pools that have none yet (a power of two). */
  readonly blockSize: number;
};

export const usage = `metal-l2-ipam-controller: a Cluster API IPAM provider with VRF-backed in-cluster pools

  --kubeconfig PATH                  kubeconfig to use; in-cluster config when absent
  --namespace NS                     watch claims and pools in one namespace (default: all)
  --leader-elect=true|false          elect a leader through a Lease (default true)
  --leader-election-namespace NS     where the Lease lives (default: the pod's namespace)
  --leader-election-id NAME          the Lease name (default metal-l2-ipam-controller)
  --metrics-bind-address ADDR        Prometheus metrics at ADDR/metrics (default :8080; 0 disables)
  --health-probe-bind-address ADDR   /healthz and /readyz (default :8081; 0 disables)
  --webhook-port PORT                HTTPS port of the validating webhook (default 9443; 0 disables)
  --webhook-cert-dir DIR             holds tls.crt and tls.key (default /tmp/k8s-webhook-server/serving-certs)
  --concurrency N                    pools reconciled at once (default 10)
  --log-level LEVEL                  error|warn|info|debug or 0-5 (default info)
  --log-format json|text             (default json)
  --graceful-shutdown-timeout-seconds N wait up to N s for running reconciles on SIGTERM (default 30;
                                     the pod's terminationGracePeriodSeconds must be longer)
  --reconcile-timeout-seconds N      one pool's reconcile is aborted (and retried with backoff) after N s
                                     (default 300)
  --metal-api-url URL                Equinix Metal API base URL (default ${DEFAULT_BASE_URL})
  --metal-rate-limit R[:B]           Metal requests a second (and burst) per API token, at most (default ${formatRateLimit(DEFAULT_RATE_LIMIT)});
                                     off: no limit here (Metal's 429s are still waited out)
  --controller-namespace NS          default namespace of global pools' credentials Secrets
                                     (default: POD_NAMESPACE, else the pod's service account namespace)
  --vrf-resync-seconds N             check a ready VRF-backed pool's Metal side again after N s (default 300)
  --cluster-identity ID              this management cluster's identity, tagged on the Metal objects pools
                                     create (default: the kube-system Namespace UID; set the same one after
                                     a restore or clusterctl move into a new cluster)
  --pool-status-budget-bytes N       size budget of one object holding allocations (an IPAddressBlock), managedFields
                                     included (default ${DEFAULT_STATUS_BUDGET_BYTES}, 1.25 MiB; the API server refuses objects past
                                     ~1.5 MiB): --block-size must fit it with the longest entries
  --block-size N                     addresses per IPAddressBlock for pools that have none yet: a power of two
                                     (default ${DEFAULT_BLOCK_SIZE}, at most ${MAX_BLOCK_SIZE}); a pool keeps the size it started with
`;

/** Parses argv (without node and script). Throws with a message naming the bad flag. */
export function parseFlags(argv: readonly string[]): IpamFlags | 'help' {
  const { values } = parseArgs({
    args: normalizeBooleanFlags(argv),
    strict: true,
    allowNegative: true,
    options: {
      ...runtimeFlagOptions,
      'webhook-port': { type: 'string', default: '9443' },
      'webhook-cert-dir': { type: 'string', default: '/tmp/k8s-webhook-server/serving-certs' },
      'metal-api-url': { type: 'string', default: DEFAULT_BASE_URL },
      'metal-rate-limit': { type: 'string', default: formatRateLimit(DEFAULT_RATE_LIMIT) },
      'controller-namespace': { type: 'string' },
      'vrf-resync-seconds': { type: 'string', default: '300' },
      'cluster-identity': { type: 'string' },
      'pool-status-budget-bytes': { type: 'string', default: String(DEFAULT_STATUS_BUDGET_BYTES) },
      'block-size': { type: 'string', default: String(DEFAULT_BLOCK_SIZE) },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help === true) return 'help';
  const runtime = readRuntimeFlags(values);
  const poolStatusBudgetBytes = budgetFlag(values['pool-status-budget-bytes']);
  return {
    ...runtime,
    leaderElectionId: runtime.leaderElectionId ?? 'metal-l2-ipam-controller',
    webhookPort: intFlag(values['webhook-port'], 'webhook-port', 0),
    webhookCertDir: values['webhook-cert-dir'],
    metalApiUrl: urlFlag(values['metal-api-url'], 'metal-api-url'),
    metalRateLimit: rateLimitFlag(values['metal-rate-limit'], 'metal-rate-limit'),
    controllerNamespace: values['controller-namespace'],
    vrfResyncSeconds: intFlag(values['vrf-resync-seconds'], 'vrf-resync-seconds', 1),
    clusterIdentity:
      values['cluster-identity'] === undefined ? undefined : validateClusterIdentity(values['cluster-identity'], '--cluster-identity'),
    poolStatusBudgetBytes,
    blockSize: blockSizeFlag(values['block-size'], poolStatusBudgetBytes),
  };
}

/** Below 16 KiB a pool object holds hardly more than its spec; above 1.5 MiB the API server refuses it anyway. */
function budgetFlag(value: string): number {
  const bytes = intFlag(value, 'pool-status-budget-bytes', 16_384);
  if (bytes > MAX_STATUS_BUDGET_BYTES) {
    throw new Error(
      `--pool-status-budget-bytes must stay below etcd’s 1.5 MiB request limit (at most ${MAX_STATUS_BUDGET_BYTES}), not ${value}`,
    );
  }
  return bytes;
}

/** A power of two whose full block, with the longest entries, fits the object budget. */
function blockSizeFlag(value: string, budgetBytes: number): number {
  const size = intFlag(value, 'block-size', 1);
  if (!isPowerOfTwo(size)) throw new Error(`--block-size must be a power of two (4, 16, 1024, ...), not ${value}`);
  const max = maxBlockSizeFor(budgetBytes);
  if (size > max) {
    throw new Error(
      `--block-size ${value} is too large: a full block of the longest entries must fit --pool-status-budget-bytes ${budgetBytes} (at most ${max} addresses)`,
    );
  }
  return size;
}
