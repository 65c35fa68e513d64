import { parseArgs } from 'node:util';
import { intFlag, normalizeBooleanFlags, readRuntimeFlags, runtimeFlagOptions, urlFlag, type RuntimeFlags } from '@metal-l2/kube';
import { announcerImageIssue } from '@metal-l2/machine-config';
import { DEFAULT_BASE_URL, DEFAULT_RATE_LIMIT, formatRateLimit, rateLimitFlag, type RateLimitOptions } from '@metal-l2/metal-api';

/** Where Equinix Metal servers read their own metadata. */
export const DEFAULT_METADATA_URL = 'https://metadata.platformequinix.com/metadata';

/** The controller's flags: the runtime's shared ones (packages/kube) plus the network controller's own. */
export type NetworkFlags = RuntimeFlags & {
  readonly leaderElectionId: string;
  readonly webhookPort: number;
  readonly webhookCertDir: string;
  readonly metalApiUrl: string;
  /** Client-side limit on Metal requests, per API token; false: none. */
  readonly metalRateLimit: RateLimitOptions | false;
  /** namespace/name of the Secret with the default Metal API token (key apiToken). */
  readonly metalCredentialsSecret?: { readonly namespace: string; readonly name: string } | undefined;
  readonly metadataUrl: string;
  /** The image (registry/path:tag or @digest) Ignition control planes run keepalived from; undefined: none. */
  readonly announcerImage: string | undefined;
  readonly holdTimeoutSeconds: number;
  readonly provisioningEstimateSeconds: number;
  readonly driftCheckIntervalSeconds: number;
  readonly bootScriptTimeoutSeconds: number;
};

export const usage = `metal-l2-network-controller: VLANs, port modes and first-boot network configuration for CAPP machines

  --kubeconfig PATH                    kubeconfig to use; in-cluster config when absent
  --namespace NS                       watch machines in one namespace (default: all)
  --leader-elect=true|false            elect a leader through a Lease (default true)
  --leader-election-namespace NS       where the Lease lives (default: the pod's namespace)
  --leader-election-id NAME            the Lease name (default metal-l2-network-controller)
  --metrics-bind-address ADDR          Prometheus metrics at ADDR/metrics (default :8080; 0 disables)
  --health-probe-bind-address ADDR     /healthz and /readyz (default :8081; 0 disables)
  --webhook-port PORT                  HTTPS port of the webhooks (default 9443; 0 disables)
  --webhook-cert-dir DIR               holds tls.crt and tls.key (default /tmp/k8s-webhook-server/serving-certs)
  --concurrency N                      machines reconciled at once (default 10)
  --log-level LEVEL                    error|warn|info|debug or 0-5 (default info)
  --log-format json|text               (default json)
  --graceful-shutdown-timeout-seconds N wait up to N s for running reconciles on SIGTERM (default 30;
                                       the pod's terminationGracePeriodSeconds must be longer)
  --reconcile-timeout-seconds N        one machine's reconcile is aborted (and retried with backoff) after N s
                                       (default 60), so a hung call cannot hold a worker
  --metal-api-url URL                  Equinix Metal API base URL (default ${DEFAULT_BASE_URL})
  --metal-rate-limit R[:B]             Metal requests a second (and burst) per API token, at most (default ${formatRateLimit(DEFAULT_RATE_LIMIT)});
                                       off: no limit here (Metal's 429s are still waited out)
  --metal-credentials-secret NS/NAME   Secret with the default Metal API token (key apiToken); a template's
                                       credentialsSecretRef overrides it
  --metadata-url URL                   where the boot script reads the metadata (default ${DEFAULT_METADATA_URL})
  --announcer-image REF                the image Ignition (Flatcar) control planes run their endpoint announcer,
                                       keepalived, from: registry/path:tag or registry/path@sha256:... (the
                                       chart sets its own image); none: such machines are refused with
                                       AnnouncerImageNotConfigured. Cloud-config machines install keepalived
                                       with apt-get and do not use it
  --hold-timeout-seconds N             report HoldTimeout when a machine stays paused longer (default 300)
  --provisioning-estimate-seconds N    bare-metal provisioning time, for the MachineHealthCheck warning (default 600)
  --drift-check-interval-seconds N     read each configured machine's device about this often (jittered) to find
                                       changes made outside the controller (default 600)
  --boot-script-timeout-seconds N      report BootScriptTimeout when a layer-2 mode waits longer for the boot
                                       script's "metadata captured" (default 900)
`;

function secretRef(value: string | undefined): { namespace: string; name: string } | undefined {
  if (value === undefined || value === '') return undefined;
  const [namespace, name, ...rest] = value.split('/');
  if (namespace === undefined || namespace === '' || name === undefined || name === '' || rest.length > 0) {
    throw new Error(`--metal-credentials-secret takes namespace/name, not ${JSON.stringify(value)}`);
  }
  return { namespace, name };
}

/** --announcer-image: empty means none (a chart value set to ""); anything else must be a reference ctr can pull. */
function imageFlag(value: string | undefined): string | undefined {
  if (value === undefined || value === '') return undefined;
  const issue = announcerImageIssue(value);
  if (issue !== undefined) throw new Error(`--announcer-image: ${issue}`);
  return value;
}

/** Parses argv (without node and script). Throws with a message naming the bad flag. */
export function parseFlags(argv: readonly string[]): NetworkFlags | 'help' {
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
      'metal-credentials-secret': { type: 'string' },
      'metadata-url': { type: 'string', default: DEFAULT_METADATA_URL },
      'announcer-image': { type: 'string' },
      'hold-timeout-seconds': { type: 'string', default: '300' },
      'provisioning-estimate-seconds': { type: 'string', default: '600' },
      'drift-check-interval-seconds': { type: 'string', default: '600' },
      'boot-script-timeout-seconds': { type: 'string', default: '900' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help === true) return 'help';
  const runtime = readRuntimeFlags(values);
  return {
    ...runtime,
    leaderElectionId: runtime.leaderElectionId ?? 'metal-l2-network-controller',
    webhookPort: intFlag(values['webhook-port'], 'webhook-port', 0),
    webhookCertDir: values['webhook-cert-dir'],
    metalApiUrl: urlFlag(values['metal-api-url'], 'metal-api-url'),
    metalRateLimit: rateLimitFlag(values['metal-rate-limit'], 'metal-rate-limit'),
    metalCredentialsSecret: secretRef(values['metal-credentials-secret']),
    metadataUrl: urlFlag(values['metadata-url'], 'metadata-url'),
    announcerImage: imageFlag(values['announcer-image']),
    holdTimeoutSeconds: intFlag(values['hold-timeout-seconds'], 'hold-timeout-seconds', 1),
    provisioningEstimateSeconds: intFlag(values['provisioning-estimate-seconds'], 'provisioning-estimate-seconds', 0),
    driftCheckIntervalSeconds: intFlag(values['drift-check-interval-seconds'], 'drift-check-interval-seconds', 10),
    bootScriptTimeoutSeconds: intFlag(values['boot-script-timeout-seconds'], 'boot-script-timeout-seconds', 1),
  };
}
