// Flags of the metal-l2-sim binary, parsed apart from main() so they can be tested alone.

import { parseArgs } from 'node:util';
import { parseRateLimit, RateLimitSpecError, type SimRateLimit } from './rate-limit.js';
import type { SimDelays } from './store.js';

export interface CliOptions {
  readonly port: number;
  readonly host: string;
  readonly seedFile: string | undefined;
  readonly seed: string | undefined;
  /** A file path, or inline JSON/YAML (text starting with `[` or `{`). */
  readonly faults: string | undefined;
  readonly tlsCert: string | undefined;
  readonly tlsKey: string | undefined;
  readonly publicUrl: string | undefined;
  /** Validate every call against the spec at this path ('' = the default ../shared path). */
  readonly contractSpec: string | undefined;
  readonly delays: Partial<SimDelays>;
  /** A token bucket per API token (--rate-limit); none when absent. */
  readonly rateLimit: SimRateLimit | undefined;
  readonly help: boolean;
}

export const USAGE = `metal-l2-sim: a stateful Equinix Metal API simulator

  --port <n>                 listen port (default 8080; 0 picks a free one)
  --host <addr>              listen address (default 127.0.0.1)
  --seed-file <path>         YAML or JSON seed: metros, plans, projects, tokens
  --seed <string>            seed for ids, MACs and fault dice (default: random)
  --faults <path|json>       fault rules active from the start (list, or {"faults": [...]})
  --tls-cert <path>          serve HTTPS with this PEM certificate (needs --tls-key)
  --tls-key <path>           PEM private key for --tls-cert
  --public-url <url>         base URL devices are given in their metadata (default: the listen URL)
  --validate-contract        check every request/response against the OpenAPI spec (report: GET /_sim/contract)
  --contract-spec <path>     the spec to validate against (implies --validate-contract)
  --device-queued-ms <n>     queued -> provisioning delay (default 1000)
  --device-provisioning-ms <n>  provisioning -> active delay (default 4000)
  --device-deprovisioning-ms <n>  deleted device: deprovisioning -> gone (404) delay (default 3000; 0 = at once)
  --batch-queued-ms <n>      VLAN batch queued -> in_progress delay (default 200)
  --batch-in-progress-ms <n> VLAN batch in_progress -> completed delay (default 800)
  --rate-limit <rps>[:<burst>]  a token bucket per API token: beyond it, 429 with Retry-After
                             (default: no limit; Metal publishes no figures; burst default: rps)
  --help

The API is served under /metal/v1, each device's metadata under /metadata/<device-id>, and the
simulator's own endpoints under /_sim (faults, requests, contract).`;

export class CliError extends Error {
  override readonly name = 'CliError';
}

function integer(name: string, raw: string | undefined, fallback?: number): number | undefined {
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new CliError(`--${name} must be a non-negative integer, got ${raw}`);
  return Number(raw);
}

export function parseCliArgs(argv: readonly string[]): CliOptions {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        'seed-file': { type: 'string' },
        seed: { type: 'string' },
        faults: { type: 'string' },
        'tls-cert': { type: 'string' },
        'tls-key': { type: 'string' },
        'public-url': { type: 'string' },
        'validate-contract': { type: 'boolean' },
        'contract-spec': { type: 'string' },
        'device-queued-ms': { type: 'string' },
        'device-provisioning-ms': { type: 'string' },
        'device-deprovisioning-ms': { type: 'string' },
        'batch-queued-ms': { type: 'string' },
        'batch-in-progress-ms': { type: 'string' },
        'rate-limit': { type: 'string' },
        help: { type: 'boolean' },
      },
    }));
  } catch (err: unknown) {
    throw new CliError(err instanceof Error ? err.message : String(err));
  }
  if ((values['tls-cert'] === undefined) !== (values['tls-key'] === undefined)) {
    throw new CliError('--tls-cert and --tls-key go together');
  }
  const delays: Record<string, number> = {};
  const delayFlags = {
    deviceQueuedMs: 'device-queued-ms',
    deviceProvisioningMs: 'device-provisioning-ms',
    deviceDeprovisioningMs: 'device-deprovisioning-ms',
    batchQueuedMs: 'batch-queued-ms',
    batchInProgressMs: 'batch-in-progress-ms',
  } as const;
  for (const [key, flag] of Object.entries(delayFlags)) {
    const v = integer(flag, values[flag]);
    if (v !== undefined) delays[key] = v;
  }
  const contractSpec = values['contract-spec'] ?? (values['validate-contract'] === true ? '' : undefined);
  let rateLimit: SimRateLimit | undefined;
  try {
    rateLimit = values['rate-limit'] === undefined ? undefined : parseRateLimit(values['rate-limit']);
  } catch (err: unknown) {
    if (!(err instanceof RateLimitSpecError)) throw err;
    throw new CliError(`--rate-limit: ${err.message}`);
  }
  return {
    port: integer('port', values.port, 8080) ?? 8080,
    host: values.host ?? '127.0.0.1',
    seedFile: values['seed-file'],
    seed: values.seed,
    faults: values.faults,
    tlsCert: values['tls-cert'],
    tlsKey: values['tls-key'],
    publicUrl: values['public-url'],
    contractSpec,
    delays,
    rateLimit,
    help: values.help === true,
  };
}
