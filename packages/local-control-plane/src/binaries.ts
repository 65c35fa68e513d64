import { execFile } from 'node:child_process';
import { access, constants } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const BINARY_NAMES = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kubectl', 'helm'] as const;
export type BinaryName = (typeof BINARY_NAMES)[number];
export type Binaries = Readonly<Record<BinaryName, string>> & { readonly dir: string };

/**
 * Finds the control-plane binaries: `METAL_L2_BIN_DIR` when set, otherwise the cache that
 * hack/build-control-plane.sh fills (the script returns at once when the versions are cached,
 * and builds them from the Go module proxy when not).
 */
export async function resolveBinaries(repoRoot: string): Promise<Binaries> {
  let dir = process.env['METAL_L2_BIN_DIR'];
  if (dir === undefined || dir === '') {
    const script = join(repoRoot, 'hack', 'build-control-plane.sh');
    try {
      const { stdout } = await run('bash', [script], { maxBuffer: 16 * 1024 * 1024, timeout: 80 * 60 * 1000 });
      dir = stdout.trim().split('\n').pop() ?? '';
    } catch (err: unknown) {
      throw new Error(`building the local control plane with ${script} failed; run it by hand to see why`, { cause: err });
    }
  }
  const entries = await Promise.all(
    BINARY_NAMES.map(async (name) => {
      const path = join(dir, name);
      await access(path, constants.X_OK).catch((err: unknown) => {
        throw new Error(`control-plane binary ${name} is missing in ${dir}`, { cause: err });
      });
      return [name, path] as const;
    }),
  );
  return { dir, ...(Object.fromEntries(entries) as Record<BinaryName, string>) };
}
