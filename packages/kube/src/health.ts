import type { ServerResponse } from 'node:http';
import { listen, parseBindAddress, type ServerHandle } from './http-server.js';

/** A named probe: true (or resolving true) when healthy/ready. Throwing counts as failing. */
export type Check = () => boolean | Promise<boolean>;

export interface ProbeServerOptions {
  /** `--health-probe-bind-address`; "0" disables the server. */
  readonly address: string;
  /** Served at /healthz (liveness): fails only when the process should be restarted. */
  readonly healthChecks: ReadonlyMap<string, Check>;
  /** Served at /readyz: e.g. "caches synced". */
  readonly readinessChecks: ReadonlyMap<string, Check>;
}

async function runChecks(checks: ReadonlyMap<string, Check>): Promise<{ name: string; ok: boolean }[]> {
  return Promise.all(
    [...checks].map(async ([name, check]) => {
      try {
        return { name, ok: await check() };
      } catch {
        return { name, ok: false };
      }
    }),
  );
}

/** Answers like the API server's own health endpoints: "ok", or one [+]/[-] line per check. */
function respond(res: ServerResponse, answer: { endpoint: string; results: { name: string; ok: boolean }[]; verbose: boolean }): void {
  const { endpoint, results, verbose } = answer;
  const ok = results.every((r) => r.ok);
  const lines = results.map((r) => `[${r.ok ? '+' : '-'}]${r.name} ${r.ok ? 'ok' : 'failed'}`);
  const body = ok && !verbose ? 'ok\n' : `${lines.join('\n')}\n${endpoint} check ${ok ? 'passed' : 'failed'}\n`;
  res.writeHead(ok ? 200 : 500, { 'Content-Type': 'text/plain; charset=utf-8' }).end(body);
}

/** Serves /healthz and /readyz on `address`; resolves undefined when disabled. */
export async function startProbeServer(options: ProbeServerOptions): Promise<ServerHandle | undefined> {
  const bind = parseBindAddress(options.address);
  if (bind === undefined) return undefined;
  return listen({
    address: bind,
    handler: (req, res) => {
      const url = new URL(req.url ?? '/', 'http://probe');
      const checks =
        url.pathname === '/healthz' || url.pathname === '/livez'
          ? options.healthChecks
          : url.pathname === '/readyz'
            ? options.readinessChecks
            : undefined;
      if (req.method !== 'GET' || checks === undefined) {
        res.writeHead(404).end();
        return;
      }
      const endpoint = url.pathname.slice(1);
      void runChecks(checks).then((results) => respond(res, { endpoint, results, verbose: url.searchParams.has('verbose') }));
    },
  });
}
