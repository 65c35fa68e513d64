import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { copyFileSync, chmodSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { freePort } from '@metal-l2/local-control-plane';
import { createTestNamespace, deleteTestNamespace, loadKubeConfig, testKubeconfigPath } from '@metal-l2/test-support/cluster';
import { installCrds, projectCrds, upstreamCrds } from '@metal-l2/test-support/crds';
import { repoRoot } from '@metal-l2/test-support/paths';
import { waitFor } from '@metal-l2/test-support/wait-for';

const run = promisify(execFile);
const imageDir = join(repoRoot, '.local', 'image');

interface ImageInfo {
  reference: string;
  digest: string;
  archive?: string;
  layers: { digest: string; size: number }[];
}
/** The runtime bundle umoci writes from the image config (OCI runtime spec). */
interface RuntimeSpec {
  process: { args: string[]; env: string[]; cwd: string; user: { uid: number; gid: number } };
}

/** Newest input of the image: the build scripts, the lockfile, every package's last build. */
function newestInput(): number {
  const files = [join(repoRoot, 'hack/build-image.js'), join(repoRoot, 'hack/image/trim-rootfs.js'), join(repoRoot, 'package-lock.json')];
  for (const pkg of readdirSync(join(repoRoot, 'packages'))) files.push(join(repoRoot, 'packages', pkg, 'dist', '.tsbuildinfo'));
  return Math.max(...files.filter((f) => existsSync(f)).map((f) => statSync(f).mtimeMs));
}

// The image CI builds (npm run image) is unpacked with umoci and each controller runs from the
// image's own root filesystem, as the image's user, with the image's environment and working
// directory, against this run's API server, until its /readyz answers 200.
describe('container image', () => {
  const kc = loadKubeConfig();
  const tmp = mkdtempSync(join(tmpdir(), 'metal-l2-image-'));
  const bundle = join(tmp, 'bundle');
  const rootfs = join(bundle, 'rootfs');
  let info: ImageInfo;
  let spec: RuntimeSpec;
  let namespace = '';
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    if (process.getuid?.() !== 0) throw new Error('the image test runs the image in a chroot: run it as root (CI does)');
    const infoFile = join(imageDir, 'image.json');
    if (!existsSync(infoFile) || statSync(infoFile).mtimeMs < newestInput()) {
      // CI builds the image before the tests; a developer's stale or missing image is rebuilt here.
      await run(process.execPath, [join(repoRoot, 'hack/build-image.js')], { cwd: repoRoot, timeout: 600_000 });
    }
    info = JSON.parse(readFileSync(infoFile, 'utf8')) as ImageInfo;
    const tag = info.reference.split(':')[1] ?? '';
    await run('umoci', ['unpack', '--image', `${join(imageDir, 'oci')}:${tag}`, bundle]);
    spec = JSON.parse(readFileSync(join(bundle, 'config.json'), 'utf8')) as RuntimeSpec;
    // The kubeconfig embeds its certificates; the image's user must be able to read it.
    copyFileSync(testKubeconfigPath(), join(rootfs, 'tmp', 'kubeconfig'));
    chmodSync(join(rootfs, 'tmp', 'kubeconfig'), 0o644);
    await installCrds(kc, [...(await upstreamCrds('capiV1_14')), ...(await upstreamCrds('capp')), ...(await projectCrds())]);
    namespace = await createTestNamespace(kc, 'image');
  }, 600_000);

  afterAll(async () => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    if (namespace !== '') await deleteTestNamespace(kc, namespace);
    rmSync(tmp, { recursive: true, force: true });
  });

  test('the image runs as 65532 with node as its entrypoint, and the archive carries the same manifest', async () => {
    expect(spec.process.user).toMatchObject({ uid: 65532, gid: 65532 });
    expect(spec.process.args).toEqual(['/usr/bin/node', '/app/packages/ipam-controller/dist/main.js']);
    expect(spec.process.cwd).toBe('/app');
    expect(readFileSync(join(rootfs, 'etc/passwd'), 'utf8')).toMatch(/^nonroot:x:65532:65532:/m);
    if (info.archive !== undefined) {
      const { stdout } = await run('skopeo', ['inspect', '--raw', `oci-archive:${join(repoRoot, info.archive)}`]);
      const { createHash } = await import('node:crypto');
      expect(`sha256:${createHash('sha256').update(stdout).digest('hex')}`).toBe(info.digest);
    }
  });

  test('no shell, no package manager, and /app is not writable by the image user', () => {
    for (const path of [
      'bin/sh',
      'usr/bin/sh',
      'usr/bin/bash',
      'usr/bin/dash',
      'usr/bin/apt',
      'usr/bin/dpkg',
      'usr/bin/perl',
      'usr/bin/env',
      'usr/bin/npm',
    ]) {
      expect({ path, exists: existsSync(join(rootfs, path)) }).toEqual({ path, exists: false });
    }
    for (const path of [
      'app',
      'app/node_modules',
      'app/packages/ipam-controller/dist/main.js',
      'app/packages/network-controller/dist/main.js',
    ]) {
      const st = statSync(join(rootfs, path));
      expect({ path, uid: st.uid, groupOrOtherWritable: (st.mode & 0o022) !== 0 }).toEqual({ path, uid: 0, groupOrOtherWritable: false });
    }
    // No dev dependencies in the production install.
    for (const dev of ['typescript', 'jest', 'eslint', 'ts-jest']) expect(existsSync(join(rootfs, 'app/node_modules', dev))).toBe(false);
  });

  test.each([{ controller: 'ipam-controller' }, { controller: 'network-controller' }])(
    '$controller becomes ready from the image root filesystem',
    async ({ controller }) => {
      const port = await freePort();
      // What a pod spec does: command = the entrypoint, args = the controller's main and flags.
      const args = [
        ...spec.process.args.slice(0, 1),
        `/app/packages/${controller}/dist/main.js`,
        '--kubeconfig=/tmp/kubeconfig',
        '--leader-elect=false',
        `--health-probe-bind-address=127.0.0.1:${port}`,
        '--metrics-bind-address=0',
        '--webhook-port=0',
        `--namespace=${namespace}`,
      ];
      const { uid, gid } = spec.process.user;
      const child = spawn(
        'unshare',
        [`--root=${rootfs}`, `--wd=${spec.process.cwd}`, `--setgid=${gid}`, `--setuid=${uid}`, '--', ...args],
        {
          env: Object.fromEntries(spec.process.env.map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)])),
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      children.push(child);
      let output = '';
      child.stdout.on('data', (d: Buffer) => (output += d.toString()));
      child.stderr.on('data', (d: Buffer) => (output += d.toString()));
      try {
        await waitFor(
          `${controller} /readyz`,
          async () => {
            if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode}: ${output}`);
            const res = await fetch(`http://127.0.0.1:${port}/readyz`);
            return res.status === 200;
          },
          { timeoutMs: 60_000, intervalMs: 250 },
        );
      } catch (err) {
        throw new Error(`${err instanceof Error ? err.message : String(err)}\n--- ${controller} output ---\n${output}`);
      }
      // It is the image's node, as the image's user.
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      expect(status).toMatch(/^Uid:\s+65532\s+65532\s+65532\s+65532$/m);
      expect(readFileSync(`/proc/${child.pid}/root/etc/os-release`, 'utf8')).toContain('VERSION_CODENAME=trixie');
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    },
    180_000,
  );
});
