import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  rmSync,
  rmdirSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { freePort } from '@metal-l2/local-control-plane';
import {
  ANNOUNCER_CONTAINER,
  ENDPOINT_STATE_PATH,
  IMAGE_KEEPALIVED,
  KEEPALIVED_CONF_PATH,
  renderEndpointAnnouncer,
  renderEndpointUnit,
} from '@metal-l2/machine-config';
import { makeServingCertificate } from '@metal-l2/test-support/certificates';
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
  const files = [
    join(repoRoot, 'hack/build-image.js'),
    join(repoRoot, 'hack/image/trim-rootfs.js'),
    join(repoRoot, 'hack/nodejs/package-lock.json'),
    join(repoRoot, 'package-lock.json'),
  ];
  for (const pkg of readdirSync(join(repoRoot, 'packages'))) files.push(join(repoRoot, 'packages', pkg, 'dist', '.tsbuildinfo'));
  return Math.max(...files.filter((f) => existsSync(f)).map((f) => statSync(f).mtimeMs));
}

/** A network namespace standing for the machine: loopback, and the VLAN interface as a veth with the node's address. */
async function makeMachineNetns(ns: string, iface: string): Promise<void> {
  const ip = async (...args: string[]): Promise<unknown> => run('ip', ['-n', ns, ...args]);
  await run('ip', ['netns', 'add', ns]);
  await ip('link', 'set', 'lo', 'up');
  await ip('link', 'add', iface, 'type', 'veth', 'peer', 'name', 'peer0');
  await ip('addr', 'add', '10.60.1.10/24', 'dev', iface);
  await ip('link', 'set', iface, 'up');
  await ip('link', 'set', 'peer0', 'up');
}

/** The announcer's files (keepalived.conf, check and notify scripts) under `root`, as the boot script writes them: port placeholders become OS names. */
function writeAnnouncerFiles(root: string, vip: string, apiPort: number): void {
  const ports = [
    {
      name: 'bond0',
      bonded: true,
      layer2: false,
      vlans: [{ vxlan: 1000, native: false, addresses: [{ address: '10.60.1.10', prefix: 24 }], routes: [] }],
    },
  ];
  const out = renderEndpointAnnouncer({ address: vip, prefix: 24, port: apiPort, vxlan: 1000, virtualRouterID: 51, ports });
  if (out.kind !== 'rendered') throw new Error(`the announcer does not render: ${JSON.stringify(out.issues)}`);
  for (const f of out.announcer.files) {
    const path = join(root, f.path);
    mkdirSync(join(path, '..'), { recursive: true, mode: 0o755 });
    writeFileSync(path, f.content.replace(/@port:([a-z0-9]+)@/g, '$1'), { mode: parseInt(f.mode, 8) });
  }
}

/** The API server stand-in: something accepting TCP on the port, in the namespace, as kube-apiserver would. */
async function startPortListener(ns: string, port: number): Promise<ChildProcess> {
  const script = `require('node:net').createServer((s) => s.end()).listen(${port}, '127.0.0.1', () => console.log('listening'))`;
  const child = spawn('ip', ['netns', 'exec', ns, process.execPath, '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`the listener exited with ${code}`)));
  });
  return child;
}

/** Sends `signal` and resolves with the exit code (null when a signal ended it). */
async function stopChild(child: ChildProcess | undefined, signal: NodeJS.Signals): Promise<number | null> {
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) return child?.exitCode ?? null;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill(signal);
  return exited;
}

/** The containerd releases hack/build-containerd.sh built (CI's install phase; built here when missing): each bin directory and its version. */
function containerdReleases(): { version: string; bin: string }[] {
  const out = execFileSync('bash', [join(repoRoot, 'hack/build-containerd.sh')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return out
    .split('\n')
    .filter((l) => l !== '')
    .map((bin) => ({ version: basename(dirname(bin)), bin }));
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

  /** unshare's arguments that run `command` as a pod would: in the image's root filesystem, as its user, in its working directory. */
  const inImage = (command: string[]): string[] => {
    const { uid, gid } = spec.process.user;
    return [`--root=${rootfs}`, `--wd=${spec.process.cwd}`, `--setgid=${gid}`, `--setuid=${uid}`, '--', ...command];
  };
  /** The image's environment, and nothing of this process's. */
  const imageEnv = (): Record<string, string> =>
    Object.fromEntries(spec.process.env.map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));

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

  // The shells and the two coreutils programs are there for keepalived's check and notify scripts
  // (the announcer Ignition machines run from this image), and nothing else of coreutils.
  test('no package manager, no coreutils but mkdir and mv, and /app is not writable by the image user', () => {
    for (const path of [
      'usr/bin/apt',
      'usr/bin/dpkg',
      'usr/bin/perl',
      'usr/bin/env',
      'usr/bin/npm',
      'usr/bin/ls',
      'usr/bin/cat',
      'usr/bin/cp',
      'usr/bin/rm',
      'usr/bin/ip',
      'usr/sbin/ip',
      'usr/bin/openssl',
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

  // The image takes the binary hack/install-node.js installed for CI (pinned with its integrity in
  // hack/nodejs/package-lock.json) instead of Debian's nodejs 20, and only the libraries it links.
  test('its node is the pinned Node.js, the same binary CI runs, with no Debian nodejs, OpenSSL or ICU beside it', async () => {
    const lock = JSON.parse(readFileSync(join(repoRoot, 'hack/nodejs/package-lock.json'), 'utf8')) as {
      packages: Record<string, { version?: string }>;
    };
    const pinned = lock.packages[`node_modules/node-linux-${process.arch}`]?.version;
    const { stdout: version } = await run('unshare', inImage(['/usr/bin/node', '--version']), { env: imageEnv() });
    expect(version.trim()).toBe(`v${pinned}`);
    const { stdout: bin } = await run(process.execPath, [join(repoRoot, 'hack/install-node.js')]);
    const sha256 = (path: string): string => createHash('sha256').update(readFileSync(path)).digest('hex');
    expect(sha256(join(rootfs, 'usr/bin/node'))).toBe(sha256(join(bin.trim(), 'node')));
    expect(existsSync(join(rootfs, 'usr/share/doc/nodejs/LICENSE'))).toBe(true);
    const packages = [...readFileSync(join(rootfs, 'var/lib/dpkg/status'), 'utf8').matchAll(/^Package: (\S+)$/gm)].map((m) => m[1] ?? '');
    expect(packages).toContain('libstdc++6');
    expect(packages.filter((p) => /^(nodejs|libnode|libicu|openssl|libuv)/.test(p))).toEqual([]);
    // Debian's libssl is keepalived's (VRRP authentication); node links its own, never the system's.
    const { stdout: linked } = await run('ldd', [join(rootfs, 'usr/bin/node')]);
    expect(linked).not.toMatch(/libssl|libcrypto/);
  });

  // Debian's nodejs used the system CA store; the official build uses its own list unless told
  // (NODE_USE_SYSTEM_CA=1 in the image's environment). A CA an operator mounts into /etc/ssl/certs
  // (a TLS-intercepting proxy's, in front of the Metal API) must keep working after the upgrade.
  test("its node trusts a CA placed in /etc/ssl/certs, as Debian's node did", async () => {
    const { certDir } = await makeServingCertificate();
    const server = createHttpsServer(
      { cert: readFileSync(join(certDir, 'tls.crt')), key: readFileSync(join(certDir, 'tls.key')) },
      (_req, res) => res.end('trusted'),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const caFile = join(rootfs, 'etc/ssl/certs/metal-l2-test-ca.pem');
    try {
      copyFileSync(join(certDir, 'ca.crt'), caFile);
      chmodSync(caFile, 0o644);
      const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/`;
      const script = `fetch('${url}').then(async (r) => process.stdout.write(await r.text()), (e) => process.stdout.write(String(e.cause?.code ?? e)))`;
      const { stdout } = await run('unshare', inImage(['/usr/bin/node', '-e', script]), { env: imageEnv() });
      expect(stdout).toBe('trusted');
    } finally {
      rmSync(caFile, { force: true });
      rmSync(certDir, { recursive: true, force: true });
      await new Promise((resolve) => server.close(resolve));
    }
  });

  // keepalived, the endpoint announcer Ignition (Flatcar) control planes run from this image
  // (metal-l2-endpoint.service), from the image's root filesystem with the rendered files, in a
  // network namespace of its own with the VLAN interface as a veth: it takes the VIP once the API
  // server check passes and gives it up when the check fails.
  describe('keepalived from the image', () => {
    const ns = `metal-l2-image-${process.pid}`;
    const vip = '10.60.1.5';
    const iface = 'bond0.1000';
    let apiPort = 0;
    let keepalived: ChildProcess | undefined;
    let listener: ChildProcess | undefined;
    let log = '';

    const ip = async (...args: string[]): Promise<string> => (await run('ip', ['-n', ns, ...args])).stdout;
    const holdsVip = async (): Promise<boolean> => (await ip('-o', '-4', 'addr', 'show', 'dev', iface)).includes(` ${vip}/24 `);
    const state = (): string | undefined => {
      const file = join(rootfs, ENDPOINT_STATE_PATH);
      return existsSync(file) ? readFileSync(file, 'utf8').trim() : undefined;
    };
    /** Waits for keepalived's state (written by the rendered notify script) and the VIP to agree. */
    const settles = async (want: { state: string; vip: boolean }): Promise<void> => {
      try {
        await waitFor(
          `${want.state} with${want.vip ? '' : 'out'} the VIP`,
          async () => {
            if (keepalived?.exitCode !== null) throw new Error(`keepalived exited with ${keepalived?.exitCode}`);
            return state() === want.state && (await holdsVip()) === want.vip;
          },
          { timeoutMs: 30_000, intervalMs: 100 },
        );
      } catch (err) {
        throw new Error(`${err instanceof Error ? err.message : String(err)} (state ${state()})\n--- keepalived ---\n${log}`);
      }
    };
    const startListener = async (): Promise<ChildProcess> => {
      const child = await startPortListener(ns, apiPort);
      children.push(child);
      return child;
    };

    beforeAll(async () => {
      apiPort = await freePort();
      await makeMachineNetns(ns, iface);
      writeAnnouncerFiles(rootfs, vip, apiPort);
      // The mounts containerd gives a container: /run (and the unit's /run/metal-l2), /dev's devices.
      mkdirSync(join(rootfs, ENDPOINT_STATE_PATH, '..'), { recursive: true });
      for (const [name, minor] of [
        ['null', 3],
        ['zero', 5],
        ['random', 8],
        ['urandom', 9],
      ] as const) {
        await run('mknod', ['-m', '666', join(rootfs, 'dev', name), 'c', '1', String(minor)]);
      }
    }, 60_000);

    afterAll(async () => {
      await stopChild(listener, 'SIGKILL');
      await stopChild(keepalived, 'SIGKILL');
      await run('ip', ['netns', 'delete', ns]).catch(() => undefined);
    });

    test('the unit runs this binary with these arguments', () => {
      const unit = renderEndpointUnit('ghcr.io/metal-l2/metal-l2:0.1.0', { after: 'metal-l2.service', before: 'kubeadm.service' });
      expect(unit).toContain(` ${IMAGE_KEEPALIVED} --dont-fork --log-console --vrrp --use-file=${KEEPALIVED_CONF_PATH}\n`);
      expect(statSync(join(rootfs, IMAGE_KEEPALIVED)).mode & 0o111).not.toBe(0);
    });

    test('holds the VIP while the API server check passes, gives it up when it fails, and stops cleanly', async () => {
      // As the unit runs it: root, in the image's root filesystem, with its own /proc, in the machine's network namespace.
      const args = ['netns', 'exec', ns, 'unshare', '--mount-proc=/proc', `--root=${rootfs}`, '--'];
      keepalived = spawn(
        'ip',
        [...args, IMAGE_KEEPALIVED, '--dont-fork', '--log-console', '--vrrp', `--use-file=${KEEPALIVED_CONF_PATH}`],
        {
          env: imageEnv(),
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      children.push(keepalived);
      keepalived.stdout?.on('data', (d: Buffer) => (log += d.toString()));
      keepalived.stderr?.on('data', (d: Buffer) => (log += d.toString()));
      // Nothing listens: the check fails from the start (init_fail), the instance is in FAULT.
      await settles({ state: 'FAULT', vip: false });
      listener = await startListener();
      await settles({ state: 'MASTER', vip: true });
      await stopChild(listener, 'SIGKILL');
      await settles({ state: 'FAULT', vip: false });
      // Back again, then a stop (what systemctl stop sends through ctr) leaves no VIP behind.
      listener = await startListener();
      await settles({ state: 'MASTER', vip: true });
      expect(await stopChild(keepalived, 'SIGTERM')).toBe(0);
      expect(await holdsVip()).toBe(false);
    }, 120_000);
  });

  // metal-l2-endpoint.service's own command lines, parsed from the rendered unit, run as systemd
  // would run them against containerd releases Flatcar ships (hack/build-containerd.sh: Debian's
  // containerd is 1.6, whose ctr has no `run --user`). Each containerd is private to the test: its
  // own root, state and config, in a network namespace (so `--net-host` is that namespace) and a
  // mount namespace that stands for the machine: its own /run (the default socket the unit's ctr
  // dials, /run/metal-l2), /etc over an overlay (/etc/keepalived), and the built ctr at /usr/bin/ctr.
  // No registry is reachable: the image archive is imported under the reference the unit names.
  describe.each(containerdReleases())('metal-l2-endpoint.service under containerd $version', ({ version, bin }) => {
    const ns = `metal-l2-ctr-${version}-${process.pid}`;
    const vip = '10.60.1.5';
    const iface = 'bond0.1000';
    const dir = join(tmp, `containerd-${version}`);
    const image = 'localhost/metal-l2:unit-test';
    const unit = renderEndpointUnit(image, { after: 'metal-l2.service', before: 'kubeadm.service' });
    const lines = (key: string): string[] => [...unit.matchAll(new RegExp(`^${key}=(.*)$`, 'gm'))].map((m) => m[1] ?? '');
    let apiPort = 0;
    let daemon: ChildProcess | undefined;
    let daemonLog = '';
    let listener: ChildProcess | undefined;

    /** Runs argv inside the machine (containerd's mount and network namespaces). */
    const onMachine = async (argv: string[]): Promise<{ code: number; out: string }> => {
      if (daemon?.pid === undefined) throw new Error('containerd is not running');
      return new Promise((resolve) => {
        execFile('nsenter', ['-t', String(daemon?.pid), '-m', '-n', '--', ...argv], (err, stdout, stderr) => {
          const code = err === null ? 0 : typeof err.code === 'number' ? err.code : 1;
          resolve({ code, out: stdout + stderr });
        });
      });
    };
    /** A unit command line as systemd runs it: its words (the unit keeps them free of quotes), and '-' lets it fail. */
    const execLine = async (line: string): Promise<{ code: number; out: string; mayFail: boolean }> => {
      const mayFail = line.startsWith('-');
      return { ...(await onMachine(line.slice(mayFail ? 1 : 0).split(' '))), mayFail };
    };
    const startPreMustPass = async (): Promise<void> => {
      for (const line of lines('ExecStartPre')) {
        const result = await execLine(line);
        if (line.includes(' image pull ')) continue; // shown on its own below: no registry here
        if (!result.mayFail) expect({ line, ...result }).toMatchObject({ line, code: 0 });
      }
    };
    const startUnit = (): { child: ChildProcess; log: () => string } => {
      const [line] = lines('ExecStart');
      if (line === undefined || daemon?.pid === undefined) throw new Error('no ExecStart, or no containerd');
      const child = spawn('nsenter', ['-t', String(daemon.pid), '-m', '-n', '--', ...line.split(' ')], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(child);
      let out = '';
      child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
      return { child, log: () => out };
    };
    const holdsVip = async (): Promise<boolean> =>
      (await run('ip', ['-n', ns, '-o', '-4', 'addr', 'show', 'dev', iface])).stdout.includes(` ${vip}/24 `);
    const state = (): string | undefined => {
      const file = `/proc/${daemon?.pid}/root${ENDPOINT_STATE_PATH}`;
      return existsSync(file) ? readFileSync(file, 'utf8').trim() : undefined;
    };
    const settles = async (want: { state: string; vip: boolean }, started: { child: ChildProcess; log: () => string }): Promise<void> => {
      try {
        await waitFor(
          `${want.state} with${want.vip ? '' : 'out'} the VIP`,
          async () => {
            if (started.child.exitCode !== null) throw new Error(`ctr run exited with ${started.child.exitCode}`);
            // The state file outlives a killed keepalived: this run's own log says it got there.
            const logged = want.state !== 'MASTER' || started.log().includes('Entering MASTER STATE');
            return logged && state() === want.state && (await holdsVip()) === want.vip;
          },
          { timeoutMs: 60_000, intervalMs: 100 },
        );
      } catch (err) {
        throw new Error(`${err instanceof Error ? err.message : String(err)} (state ${state()})\n--- ctr run ---\n${started.log()}`);
      }
    };
    const containers = async (): Promise<string> =>
      (await onMachine(['/usr/bin/ctr', '--namespace', 'metal-l2', 'container', 'ls', '-q'])).out;

    beforeAll(async () => {
      apiPort = await freePort();
      await makeMachineNetns(ns, iface);
      for (const d of ['root', 'state', 'opt', 'machine/etc', 'etc-work']) mkdirSync(join(dir, d), { recursive: true });
      writeAnnouncerFiles(join(dir, 'machine'), vip, apiPort); // the overlay's upper layer of /etc
      const v1 = version.startsWith('v1.');
      writeFileSync(
        join(dir, 'config.toml'),
        [
          `version = ${v1 ? 2 : 3}`,
          `root = "${dir}/root"`,
          `state = "${dir}/state"`,
          // Not the node tests' Debian containerd: no CRI, no /opt/containerd.
          `disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.cri.v1.runtime", "io.containerd.cri.v1.images"]`,
          '[grpc]',
          '  address = "/run/containerd/containerd.sock"',
          '[plugins."io.containerd.internal.v1.opt"]',
          `  path = "${dir}/opt"`,
          '',
        ].join('\n'),
      );
      const machine = [
        'set -e',
        'mount -t tmpfs tmpfs /run',
        `mount -t overlay overlay -o lowerdir=/etc,upperdir=${dir}/machine/etc,workdir=${dir}/etc-work /etc`,
        `mount --bind ${bin}/ctr /usr/bin/ctr`,
        `exec ${bin}/containerd --config ${dir}/config.toml`,
      ].join('\n');
      // nsenter rather than `ip netns exec`, which mounts a /sys of its own without the cgroup hierarchies runc needs.
      daemon = spawn('unshare', ['--mount', '--propagation', 'private', 'nsenter', `--net=/run/netns/${ns}`, 'sh', '-c', machine], {
        env: { PATH: `${bin}:/usr/sbin:/usr/bin:/sbin:/bin` },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(daemon);
      daemon.stdout?.on('data', (d: Buffer) => (daemonLog += d.toString()));
      daemon.stderr?.on('data', (d: Buffer) => (daemonLog += d.toString()));
      try {
        await waitFor(
          'containerd answers',
          async () => {
            if (daemon?.exitCode !== null) throw new Error(`containerd exited with ${daemon?.exitCode}`);
            return (await onMachine(['/usr/bin/ctr', 'version'])).code === 0;
          },
          { timeoutMs: 30_000, intervalMs: 100 },
        );
      } catch (err) {
        throw new Error(`${err instanceof Error ? err.message : String(err)}\n--- containerd ---\n${daemonLog.slice(-4000)}`);
      }
      const ctr = ['/usr/bin/ctr', '--namespace', 'metal-l2'];
      const archive = join(repoRoot, info.archive ?? '');
      const imported = await onMachine([...ctr, 'image', 'import', archive]);
      if (imported.code !== 0) throw new Error(`ctr image import: ${imported.out}`);
      // ctr names it as the archive's ref.name says (metal-l2:0.1.0, which ctr could not pull).
      const tagged = await onMachine([...ctr, 'image', 'tag', info.reference, image]);
      if (tagged.code !== 0) throw new Error(`ctr image tag: ${tagged.out}`);
    }, 120_000);

    afterAll(async () => {
      await stopChild(listener, 'SIGKILL');
      // The shims outlive containerd: end the ones running from this containerd's state directory.
      for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
        const cwd = (() => {
          try {
            return readlinkSync(`/proc/${pid}/cwd`);
          } catch {
            return '';
          }
        })();
        if (cwd.startsWith(`${dir}/state/`)) process.kill(Number(pid), 'SIGKILL');
      }
      await stopChild(daemon, 'SIGTERM');
      await run('ip', ['netns', 'delete', ns]).catch(() => undefined);
      // runc leaves the namespace's parent cgroup (ctr's default path /metal-l2/<container>) in each
      // hierarchy; rmdir removes it only while empty.
      for (const hierarchy of ['', ...readdirSync('/sys/fs/cgroup')]) {
        try {
          rmdirSync(join('/sys/fs/cgroup', hierarchy, 'metal-l2'));
        } catch {
          // not there, not a hierarchy, or in use
        }
      }
    });

    test(`its ctr is ${version}`, async () => {
      expect((await onMachine(['/usr/bin/ctr', '--version'])).out).toContain(version);
    });

    // The pull needs a registry, which this machine does not reach: ctr says so and the unit's
    // start job would retry every 5 s. The image is already there (imported), as after a first pull.
    test('the pull line reaches for the registry the reference names', async () => {
      const [pull] = lines('ExecStartPre').filter((l) => l.includes(' image pull '));
      expect(pull).toBe(`/usr/bin/ctr --namespace metal-l2 image pull ${image}`);
      const result = await execLine(pull ?? '');
      expect(result.code).not.toBe(0);
      expect(result.out).toMatch(/connection refused/);
    });

    test('ExecStartPre and ExecStart take the VIP while the check passes; a stop (SIGTERM to ctr) gives it up and removes the container', async () => {
      await startPreMustPass();
      const started = startUnit();
      await settles({ state: 'FAULT', vip: false }, started);
      listener = await startPortListener(ns, apiPort);
      children.push(listener);
      await settles({ state: 'MASTER', vip: true }, started);
      // The keepalived is the image's, as root in the container, in the machine's network namespace.
      expect(await containers()).toContain(ANNOUNCER_CONTAINER);
      // systemctl stop sends SIGTERM to ctr, the unit's main process, which hands it to keepalived.
      expect(await stopChild(started.child, 'SIGTERM')).toBe(0);
      expect(await holdsVip()).toBe(false);
      expect(await containers()).not.toContain(ANNOUNCER_CONTAINER);
    }, 120_000);

    test('after ctr was killed (SIGKILL), the next start removes the container it left and runs again', async () => {
      const first = startUnit();
      await settles({ state: 'MASTER', vip: true }, first);
      expect(await stopChild(first.child, 'SIGKILL')).toBe(null);
      // keepalived goes on in the container ctr left behind; a second `ctr run` would clash with it.
      expect(await containers()).toContain(ANNOUNCER_CONTAINER);
      expect(await holdsVip()).toBe(true);
      await startPreMustPass();
      expect(await containers()).not.toContain(ANNOUNCER_CONTAINER);
      const second = startUnit();
      await settles({ state: 'MASTER', vip: true }, second);
      expect(await stopChild(second.child, 'SIGTERM')).toBe(0);
      expect(await holdsVip()).toBe(false);
    }, 120_000);
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
      const child = spawn('unshare', inImage(args), { env: imageEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
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
