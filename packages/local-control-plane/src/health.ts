import { request as httpsRequest } from 'node:https';
import { request as httpRequest } from 'node:http';
import { delay } from './processes.js';

export interface Probe {
  readonly url: string;
  readonly token?: string;
}

/** One GET; resolves with the status code, or 0 when the connection failed. */
export function probeOnce(probe: Probe): Promise<number> {
  return new Promise((resolve) => {
    const url = new URL(probe.url);
    const headers: Record<string, string> = probe.token === undefined ? {} : { Authorization: `Bearer ${probe.token}` };
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
    // The API server's serving certificate is self-signed at first start and not known yet.
    const req = request(url, { method: 'GET', headers, rejectUnauthorized: false, timeout: 2_000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(0));
    req.end();
  });
}

/**
 * Polls until the endpoint answers 200, the deadline passes, or `isStillRunning` says the
 * process died (then it fails at once, pointing at the log, instead of waiting out the deadline).
 */
export async function waitHealthy(
  probe: Probe,
  options: { timeoutMs: number; what: string; logFile: string; isStillRunning: () => boolean },
): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  let last = 0;
  while (Date.now() < deadline) {
    last = await probeOnce(probe);
    if (last === 200) return;
    if (!options.isStillRunning()) throw new Error(`${options.what} exited during start; see ${options.logFile}`);
    await delay(100);
  }
  throw new Error(
    `${options.what} not healthy at ${probe.url} after ${options.timeoutMs} ms (last status ${last}); see ${options.logFile}`,
  );
}
