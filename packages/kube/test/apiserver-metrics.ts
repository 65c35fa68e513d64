import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { testKubeconfigPath } from '@metal-l2/test-support/cluster';

const run = promisify(execFile);

/**
 * Open WATCH requests the API server itself counts for a resource in namespace scope
 * (apiserver_longrunning_requests), read through the real kubectl. Proves on the server side
 * that a restarted watch did not leave its predecessor open.
 */
export async function openNamespacedWatches(resource: string): Promise<number> {
  const binDir = process.env['METAL_L2_TEST_BIN_DIR'];
  if (binDir === undefined) throw new Error('METAL_L2_TEST_BIN_DIR is not set: run through the jest global setup');
  const { stdout } = await run(join(binDir, 'kubectl'), ['--kubeconfig', testKubeconfigPath(), 'get', '--raw', '/metrics'], {
    maxBuffer: 64 * 1024 * 1024,
  });
  let total = 0;
  for (const line of stdout.split('\n')) {
    if (!line.startsWith('apiserver_longrunning_requests{')) continue;
    if (line.includes(`resource="${resource}"`) && line.includes('scope="namespace"') && line.includes('verb="WATCH"')) {
      total += Number(line.slice(line.lastIndexOf(' ') + 1));
    }
  }
  return total;
}
