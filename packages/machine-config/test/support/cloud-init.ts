// Debian's real cloud-init, unpacked (not installed) by fetch-cloud-init.sh, judging user data
// through cloud_init_user_data.py. Debian's own /usr/bin/python3 runs it: the unpacked modules are
// built for it.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const here = fileURLToPath(new URL('.', import.meta.url));
export const SYSTEM_PYTHON = '/usr/bin/python3';

let sitePackages: Promise<string> | undefined;

/** The dist-packages directory holding cloud-init; downloads and unpacks it on first use (cached by version). */
export function cloudInitSitePackages(): Promise<string> {
  sitePackages ??= run('bash', [join(here, 'fetch-cloud-init.sh')], { maxBuffer: 16 * 1024 * 1024 }).then(
    ({ stdout }) => stdout.trim().split('\n').pop() ?? '',
  );
  return sitePackages;
}

export interface CloudInitResult {
  /** The merged cloud-config cloud-init would act on (null when there was none). */
  cloud_config: Record<string, unknown> | null;
  /** Files in the instance's scripts directory: scripts_user runs them in this (sorted) order. */
  scripts: string[];
  /** Warnings cloud-init logged while processing. */
  warnings: string[];
  /** The instance scripts directory, to read the scripts back. */
  scriptsDir: string;
}

export interface InstanceData {
  instanceId: string;
  localHostname: string;
}

/** Runs cloud-init's user-data processing (MIME, Jinja, merging, part handlers) on `userData`. */
export async function processUserData(
  userData: string,
  instance: InstanceData,
): Promise<CloudInitResult & { cleanup: () => Promise<void> }> {
  const site = await cloudInitSitePackages();
  const dir = await mkdtemp(join(tmpdir(), 'cloud-init-'));
  const instanceData = join(dir, 'instance-data.json');
  await writeFile(
    instanceData,
    JSON.stringify({
      v1: {
        instance_id: instance.instanceId,
        'instance-id': instance.instanceId,
        local_hostname: instance.localHostname,
        'local-hostname': instance.localHostname,
      },
      ds: {},
    }),
  );
  const work = join(dir, 'work');
  const stdout = await new Promise<string>((resolve, reject) => {
    const child = execFile(
      SYSTEM_PYTHON,
      [join(here, 'cloud_init_user_data.py'), work, instanceData],
      { env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', PYTHONPATH: site, HOME: dir }, maxBuffer: 64 * 1024 * 1024 },
      (err, out, stderr) => (err === null ? resolve(out) : reject(new Error(`cloud-init driver failed: ${stderr}`, { cause: err }))),
    );
    child.stdin?.end(userData);
  });
  const result = JSON.parse(stdout) as Omit<CloudInitResult, 'scriptsDir'>;
  return { ...result, scriptsDir: join(work, 'cloud', 'instance', 'scripts'), cleanup: () => rm(dir, { recursive: true, force: true }) };
}
