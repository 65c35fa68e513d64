import { execFile } from 'node:child_process';
import { accessSync, constants, copyFileSync, lstatSync, mkdtempSync, readFileSync, realpathSync, rmSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, test } from '@jest/globals';
import { repoRoot } from '@metal-l2/test-support/paths';

const run = promisify(execFile);

/** Every workspace bin, with a flag that makes it print its usage and exit 0 (when it has one). */
const bins = [
  { pkg: 'metal-sim', name: 'metal-l2-sim', help: 'metal-l2-sim:' },
  { pkg: 'ipam-controller', name: 'metal-l2-ipam-controller', help: 'metal-l2-ipam-controller:' },
  { pkg: 'network-controller', name: 'metal-l2-network-controller', help: 'metal-l2-network-controller:' },
  { pkg: 'capp-fixture', name: 'metal-l2-capp-fixture', help: 'metal-l2-capp-fixture:' },
  { pkg: 'local-control-plane', name: 'metal-l2-cluster', help: undefined },
] as const;

function binTarget(pkg: string, name: string): string {
  const manifest = JSON.parse(readFileSync(join(repoRoot, 'packages', pkg, 'package.json'), 'utf8')) as { bin?: Record<string, string> };
  const target = manifest.bin?.[name];
  if (target === undefined) throw new Error(`packages/${pkg}/package.json has no bin ${name}`);
  return join(repoRoot, 'packages', pkg, target);
}

// npm links a workspace's bins during `npm ci`, before `npm run build` creates dist/: a bin that
// points into dist/ is silently not linked. The bins are committed launchers that load dist/.
describe('workspace bins after npm ci && npm run build', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'metal-l2-bins-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  test.each(bins)('$name points at a committed, executable launcher outside dist/', async ({ pkg, name }) => {
    const target = binTarget(pkg, name);
    expect(target).not.toContain('/dist/');
    expect(readFileSync(target, 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true);
    accessSync(target, constants.X_OK);
    const { stdout } = await run('git', ['ls-files', '--error-unmatch', target], { cwd: repoRoot });
    expect(stdout.trim()).not.toBe('');
    // npm ci linked it.
    const link = join(repoRoot, 'node_modules', '.bin', name);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(realpathSync(link)).toBe(realpathSync(target));
  });

  test.each(bins.filter((b) => b.help !== undefined))('npx --no-install $name --help runs the build', async ({ name, help }) => {
    const { stdout } = await run('npx', ['--no-install', name, '--help'], { cwd: repoRoot });
    expect(stdout).toContain(help);
  });

  test('npx --no-install metal-l2-cluster reaches the build (usage on no arguments)', async () => {
    const err = await run('npx', ['--no-install', 'metal-l2-cluster'], { cwd: repoRoot }).then(
      () => undefined,
      (e: { code?: number; stderr?: string }) => e,
    );
    expect(err?.stderr ?? '').toContain('usage: metal-l2-cluster');
  });

  test.each(bins)('$name says to build first when dist/ is missing', async ({ pkg, name }) => {
    const bin = join(tmp, pkg, 'bin');
    mkdirSync(bin, { recursive: true });
    copyFileSync(binTarget(pkg, name), join(bin, `${name}.js`));
    const err = await run(process.execPath, [join(bin, `${name}.js`), '--help']).then(
      () => undefined,
      (e: { code?: number; stderr?: string }) => e,
    );
    expect(err?.code).toBe(1);
    expect(err?.stderr).toContain(`${name}: `);
    expect(err?.stderr).toContain('npm run build');
  });
});
