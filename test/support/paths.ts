import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The shared folder beside the clone (../shared) holds the upstream CRDs and the Metal OpenAPI
 * spec. `METAL_L2_SHARED` overrides it.
 */
export function sharedDir(): string {
  return resolve(process.env['METAL_L2_SHARED'] ?? join(repoRoot, '..', 'shared'));
}

export function requireShared(what: string): string {
  const dir = sharedDir();
  if (!existsSync(dir)) {
    throw new Error(
      `${what} needs the shared folder at ${dir} (upstream CRDs, the Metal OpenAPI spec); ` +
        'clone it beside this repository or set METAL_L2_SHARED to its path',
    );
  }
  return dir;
}
