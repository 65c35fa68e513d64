// The boot script end to end on a fake root: user data injected → processed by the real cloud-init →
// its files written under a directory → `metal-l2-net apply` run by dash against a fake sysfs
// (OS names differ from Metal names), a local metadata service, and stub ifup/netplan/networkd
// that record their calls. What the script leaves behind is what a machine would boot with.
//
// The script runs with a PATH of only the tools a stock image ships (stockTools): no python3, which
// Flatcar lacks, and no other tool it might lean on by accident. Its awk is Debian's mawk, or
// busybox's (another POSIX awk; Flatcar's gawk is exercised by the Flatcar-style QEMU guest).
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { execFile } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ANNOUNCER_COMMANDS, injectUserData, renderEndpointAnnouncer, renderMachineNetwork } from '../src/index.js';
import type { EndpointAnnouncerInput, PortConfig, RendererName } from '../src/index.js';
import { CABPK_JOIN } from './fixtures/bootstrap.js';
import { vlan } from './fixtures/networks.js';
import { processUserData } from './support/cloud-init.js';

const MACS = { eth0: '40:a6:b7:74:9f:10', eth1: '40:a6:b7:74:9f:11' };
const OS = { eth0: 'ens3f0', eth1: 'ens3f1' };

const EQUINIX_INTERFACES = `auto lo
iface lo inet loopback

auto ${OS.eth0}
iface ${OS.eth0} inet manual
    bond-master bond0

auto ${OS.eth1}
iface ${OS.eth1} inet manual
    pre-up sleep 4
    bond-master bond0

auto bond0
iface bond0 inet static
    address 147.75.1.2
    netmask 255.255.255.254
    gateway 147.75.1.1
    hwaddress ${MACS.eth0}
    bond-downdelay 200
    bond-miimon 100
    bond-mode 4
    bond-updelay 200
    bond-xmit_hash_policy layer3+4
    bond-lacp-rate 1
    bond-slaves ${OS.eth0} ${OS.eth1}
    dns-nameservers 147.75.207.207 147.75.207.208
`;

const NETPLAN_IMAGE = `network:
  version: 2
  ethernets:
    ${OS.eth0}: {}
    ${OS.eth1}: {}
  bonds:
    bond0:
      interfaces: [${OS.eth0}, ${OS.eth1}]
      addresses: [147.75.1.2/31]
`;

interface Posted {
  state: string;
  code: number;
  message: string;
}

let server: Server;
let baseUrl = '';
let metadata: Record<string, unknown> = {};
/** When set, the metadata service answers with this text instead of `metadata` as JSON. */
let metadataText: string | undefined;
const posted: Posted[] = [];
const dirs: string[] = [];

/** What Flatcar and the Debian/Ubuntu cloud images all have that the script may use; python3 is not among them. */
const STOCK_TOOLS = [
  'sh',
  'cat',
  'cp',
  'mv',
  'rm',
  'mkdir',
  'chmod',
  'basename',
  'dirname',
  'readlink',
  'tr',
  'cut',
  'date',
  'sleep',
  'tail',
  'sha256sum',
  'grep',
  'sed',
];
/** The POSIX awk the script runs with, and the one HTTP client it finds (images ship curl, wget or both). */
interface Stock {
  readonly awk: 'mawk' | 'busybox';
  readonly fetcher: 'curl' | 'wget' | 'none';
}
const DEBIAN: Stock = { awk: 'mawk', fetcher: 'curl' };
const tools = new Map<string, string>();

/** A directory holding only the stock tools (links to this machine's), with the given awk and HTTP client. */
async function stockTools(stock: Stock): Promise<string> {
  const key = `${stock.awk}-${stock.fetcher}`;
  const known = tools.get(key);
  if (known !== undefined) return known;
  const dir = await mkdtemp(join(tmpdir(), `metal-l2-stock-${key}-`));
  dirs.push(dir);
  const which = (tool: string): string => execFileSync('sh', ['-c', 'command -v "$1"', 'sh', tool], { encoding: 'utf8' }).trim();
  for (const tool of stock.fetcher === 'none' ? STOCK_TOOLS : [...STOCK_TOOLS, stock.fetcher]) await symlink(which(tool), join(dir, tool));
  if (stock.awk === 'mawk') await symlink(which('mawk'), join(dir, 'awk'));
  else await put(join(dir, 'awk'), `#!/bin/sh\nexec ${which('busybox')} awk "$@"\n`, 0o755);
  tools.set(key, dir);
  return dir;
}

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (req.method === 'GET' && req.url === '/metadata') {
        res.setHeader('Content-Type', 'application/json');
        res.end(metadataText ?? JSON.stringify(metadata));
      } else if (req.method === 'POST' && req.url === '/user-state') {
        posted.push(JSON.parse(body) as Posted);
        res.end('{}');
      } else {
        res.statusCode = 404;
        res.end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  baseUrl = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
  metadata = {
    id: 'd1',
    user_state_url: `${baseUrl}/user-state`,
    network: {
      bonding: { mode: 4, link_aggregation: 'mlag_ha', mac: MACS.eth0 },
      interfaces: [
        { name: 'eth0', mac: MACS.eth0, bond: 'bond0' },
        { name: 'eth1', mac: MACS.eth1, bond: 'bond0' },
      ],
    },
  };
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

async function put(path: string, content: string, mode = 0o644): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, content);
  await chmod(path, mode);
}

/** A fake machine: sysfs with a bond of two NICs (upper-case permanent MACs), the image's network files, stub tools. */
async function machine(image: { interfaces?: string; netplan?: string }, stock: Stock = DEBIAN): Promise<Machine> {
  const root = await mkdtemp(join(tmpdir(), 'metal-l2-root-'));
  dirs.push(root);
  const net = join(root, 'sys/class/net');
  await put(join(net, 'bond0/bonding/slaves'), `${OS.eth0} ${OS.eth1}\n`);
  await put(join(net, 'bond0/address'), `${MACS.eth0}\n`);
  for (const port of ['eth0', 'eth1'] as const) {
    const os = OS[port];
    await mkdir(join(net, os, 'device'), { recursive: true });
    await put(join(net, os, 'address'), `${MACS.eth0}\n`); // slaves report the bond's MAC
    await put(join(net, os, 'bonding_slave/perm_hwaddr'), `${MACS[port].toUpperCase()}\n`);
    await symlink('../bond0', join(net, os, 'master'));
  }
  await mkdir(join(net, 'lo'), { recursive: true });
  await put(join(net, 'lo/address'), '00:00:00:00:00:00\n');
  if (image.interfaces !== undefined) await put(join(root, 'etc/network/interfaces'), image.interfaces);
  if (image.netplan !== undefined) await put(join(root, 'etc/netplan/50-cloud-init.yaml'), image.netplan, 0o600);
  const bin = join(root, 'stub-bin');
  const calls = join(root, 'calls.log');
  for (const tool of ['ifup', 'ifdown', 'netplan']) await put(join(bin, tool), `#!/bin/sh\necho "${tool} $*" >> ${calls}\n`, 0o755);
  await put(join(bin, 'ifquery'), '#!/bin/sh\nexit 1\n', 0o755);
  await put(
    join(bin, 'networkctl'),
    `#!/bin/sh\necho "networkctl $*" >> ${calls}\nif [ "$1" = status ]; then echo "       Network File: /run/systemd/network/10-$2.network"; fi\n`,
    0o755,
  );
  return { root, bin, calls, path: `${bin}:${await stockTools(stock)}` };
}

interface Machine {
  root: string;
  bin: string;
  calls: string;
  /** The script's PATH: the stub tools, then the stock tools. */
  path: string;
}

/** Inject, let cloud-init process it, write its write_files under root: what the machine has before runcmd. */
async function provision(
  root: string,
  ports: PortConfig[],
  renderer: RendererName,
  endpoint?: Omit<EndpointAnnouncerInput, 'ports'>,
): Promise<string[]> {
  const rendered = renderMachineNetwork({ ports, renderer, metadataUrl: `${baseUrl}/metadata` });
  if (rendered.kind !== 'rendered') throw new Error(JSON.stringify(rendered.issues));
  const announcer = endpoint === undefined ? undefined : renderEndpointAnnouncer({ ...endpoint, ports });
  if (announcer?.kind === 'invalid') throw new Error(JSON.stringify(announcer.issues));
  const out = injectUserData({
    value: CABPK_JOIN,
    format: 'cloud-config',
    network: rendered.network,
    ...(announcer === undefined ? {} : { announcer: announcer.announcer }),
  });
  if (out.kind !== 'injected') throw new Error(out.kind);
  const ci = await processUserData(out.value, { instanceId: 'd1', localHostname: 'worker-a' });
  dirs.push(dirname(dirname(dirname(dirname(ci.scriptsDir)))));
  const files = (ci.cloud_config?.['write_files'] ?? []) as { path: string; content: string; encoding?: string; permissions?: string }[];
  for (const f of files.filter((x) => x.path.startsWith('/opt/metal-l2/'))) {
    await put(join(root, f.path), Buffer.from(f.content, 'base64').toString('utf8'), parseInt(f.permissions ?? '0644', 8));
  }
  const runcmd = ci.cloud_config?.['runcmd'] as string[];
  expect(runcmd[0]).toBe('/opt/metal-l2/metal-l2-net apply || exit 1');
  return runcmd;
}

const DASH = execFileSync('sh', ['-c', 'command -v dash'], { encoding: 'utf8' }).trim();

function apply(m: Machine, fetchTimeoutSeconds = 5): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      DASH,
      [join(m.root, 'opt/metal-l2/metal-l2-net'), 'apply'],
      { env: { PATH: m.path, METAL_L2_ROOT: m.root, METAL_L2_FETCH_TIMEOUT: String(fetchTimeoutSeconds) } },
      (err, _stdout, stderr) => resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, stderr }),
    );
  });
}

const read = (root: string, path: string): Promise<string> => readFile(join(root, path), 'utf8');

describe('metal-l2-net apply', () => {
  test('ifupdown, eth1 unbonded with a native VLAN and a tagged VLAN on bond0: resolved by permanent MAC, eth1 out of the bond, idempotent', async () => {
    posted.length = 0;
    const m = await machine({ interfaces: EQUINIX_INTERFACES });
    await provision(
      m.root,
      [
        {
          name: 'bond0',
          bonded: true,
          layer2: false,
          vlans: [vlan(1000, '192.168.10.5/24', { routes: [{ to: '10.60.0.0/16', via: '192.168.10.1', metric: 100 }] })],
        },
        { name: 'eth1', bonded: false, layer2: true, vlans: [vlan(2000, '10.1.0.5/24', { native: true })] },
      ],
      'ifupdown',
    );

    const first = await apply(m);
    expect(first).toEqual({ code: 0, stderr: expect.stringContaining('network configured: bond0=bond0 eth1=ens3f1') });
    expect(posted).toEqual([
      { state: 'running', code: 1001, message: 'metal-l2: metadata captured in /run/metal-l2/metadata.json' },
      { state: 'succeeded', code: 1002, message: 'metal-l2: network configured: bond0=bond0 eth1=ens3f1' },
    ]);
    expect(JSON.parse(await read(m.root, 'run/metal-l2/metadata.json'))).toEqual(metadata);
    expect(await read(m.root, 'sys/class/net/bond0/bonding/slaves')).toBe('-ens3f1\n');
    const cfg = await read(m.root, 'etc/network/interfaces.d/60-metal-l2.cfg');
    expect(cfg).not.toContain('@');
    expect(cfg).toContain(
      'auto ens3f1\niface ens3f1 inet static\n    pre-up ip link set dev ens3f1 nomaster || true\n    address 10.1.0.5/24\n',
    );
    expect(cfg).toContain('iface bond0.1000 inet static\n    pre-up ip link add link bond0 name bond0.1000 type vlan id 1000 || true\n');
    expect(cfg).toContain('up ip route replace 10.60.0.0/16 via 192.168.10.1 dev bond0.1000 metric 100');
    const interfaces = await read(m.root, 'etc/network/interfaces');
    expect(interfaces).toContain('    bond-slaves ens3f0\n');
    expect(interfaces).toContain('auto ens3f1\niface ens3f1 inet manual\n    pre-up sleep 4\n\nauto bond0');
    expect(interfaces.endsWith('source /etc/network/interfaces.d/60-metal-l2.cfg\n')).toBe(true);
    expect((await read(m.root, 'calls.log')).trim().split('\n')).toEqual(['ifup ens3f1', 'ifup bond0.1000']);

    const second = await apply(m);
    expect(second.code).toBe(0);
    const again = await read(m.root, 'etc/network/interfaces');
    expect(again).toBe(interfaces);
    expect(again.match(/^source /gm)).toHaveLength(1);
    expect(await read(m.root, 'etc/network/interfaces.d/60-metal-l2.cfg')).toBe(cfg);
  });

  test('netplan, layer2-individual: both NICs leave the image bond', async () => {
    posted.length = 0;
    const m = await machine({ netplan: NETPLAN_IMAGE });
    await provision(
      m.root,
      [
        { name: 'bond0', bonded: false, layer2: true, vlans: [] },
        { name: 'eth0', bonded: false, layer2: true, vlans: [vlan(1000, '192.168.10.5/24')] },
        { name: 'eth1', bonded: false, layer2: true, vlans: [vlan(1001, '192.168.11.5/24', { native: true })] },
      ],
      'netplan',
    );
    const result = await apply(m);
    expect(result.code).toBe(0);
    expect(posted.map((p) => p.code)).toEqual([1001, 1002]);
    expect(posted[1]?.message).toBe('metal-l2: network configured: bond0=bond0 eth0=ens3f0 eth1=ens3f1');
    expect(await read(m.root, 'etc/netplan/50-cloud-init.yaml')).toContain('interfaces: []');
    const ours = await read(m.root, 'etc/netplan/60-metal-l2.yaml');
    expect(ours).toContain('    "ens3f0.1000":\n      id: 1000\n      link: "ens3f0"\n');
    expect(ours).toContain('    "ens3f1":\n');
    expect((await read(m.root, 'calls.log')).trim()).toBe('netplan apply');
  });

  test('networkd, hybrid-bonded: the VLAN drop-in lands beside the .network file networkd uses for the bond', async () => {
    posted.length = 0;
    const m = await machine({});
    await provision(m.root, [{ name: 'bond0', bonded: true, layer2: false, vlans: [vlan(1000, '192.168.10.5/24')] }], 'networkd');
    const result = await apply(m);
    expect(result.code).toBe(0);
    expect(await read(m.root, 'etc/systemd/network/10-bond0.network.d/60-metal-l2.conf')).toContain('VLAN=bond0.1000\n');
    expect(await read(m.root, 'etc/systemd/network/60-metal-l2-bond0.1000.netdev')).toContain('Name=bond0.1000\n');
    expect(await read(m.root, 'calls.log')).toContain('networkctl reload\nnetworkctl reconfigure bond0\n');
  });

  test("a control plane: the announcer's keepalived.conf names the OS interface of the VLAN (resolved by MAC), the check is executable, keepalived starts after the network", async () => {
    posted.length = 0;
    const m = await machine({ interfaces: EQUINIX_INTERFACES });
    const runcmd = await provision(
      m.root,
      [
        { name: 'bond0', bonded: true, layer2: false, vlans: [vlan(1001, '192.168.11.5/24')] },
        { name: 'eth1', bonded: false, layer2: true, vlans: [vlan(1000, '192.168.10.5/24', { native: true })] },
      ],
      'ifupdown',
      { address: '192.168.10.200', prefix: 24, port: 6443, vxlan: 1000, virtualRouterID: 7 },
    );
    expect(runcmd.slice(1, 3)).toEqual(ANNOUNCER_COMMANDS);
    expect(await apply(m)).toEqual({ code: 0, stderr: expect.stringContaining('network configured: bond0=bond0 eth1=ens3f1') });
    const conf = await read(m.root, 'etc/keepalived/keepalived.conf');
    expect(conf).not.toContain('@');
    expect(conf).toContain('    interface ens3f1\n');
    expect(conf).toContain('    virtual_router_id 7\n');
    expect(conf).toContain('        192.168.10.200/24\n');
    const check = await stat(join(m.root, 'etc/keepalived/metal-l2-apiserver-check'));
    expect(check.mode & 0o777).toBe(0o755);
  });

  test('a port with no matching MAC and no interface of its name: user state 1099 with the reason, exit non-zero', async () => {
    posted.length = 0;
    const m = await machine({ interfaces: EQUINIX_INTERFACES });
    await provision(
      m.root,
      [{ name: 'eth2', bonded: false, layer2: true, vlans: [vlan(1000, '192.168.10.5/24', { native: true })] }],
      'ifupdown',
    );
    const result = await apply(m);
    expect(result.code).not.toBe(0);
    expect(posted.map((p) => [p.state, p.code])).toEqual([
      ['running', 1001],
      ['failed', 1099],
    ]);
    expect(posted[1]?.message).toBe('metal-l2: port eth2: no OS interface with MAC (not in metadata) or named eth2');
    expect(await read(m.root, 'etc/network/interfaces')).toBe(EQUINIX_INTERFACES);
  });

  test('netplan as cloud-init writes it (block lists, document markers): eth1 leaves the bond list, then both leave it empty', async () => {
    const image = [
      '---',
      'network:',
      '    bonds:',
      '        bond0:',
      '            addresses:',
      '            - 147.75.1.2/31',
      '            interfaces:',
      `            - ${OS.eth0}`,
      `            - '${OS.eth1}'`,
      '            parameters:',
      '                mode: 802.3ad # LACP',
      '    ethernets:',
      `        ${OS.eth0}: {}`,
      `        ${OS.eth1}: {}`,
      '    version: 2',
      '...',
      '',
    ].join('\n');
    const hybrid = await machine({ netplan: image });
    await provision(
      hybrid.root,
      [
        { name: 'bond0', bonded: true, layer2: false, vlans: [vlan(1000, '192.168.10.5/24')] },
        { name: 'eth1', bonded: false, layer2: true, vlans: [vlan(1001, '192.168.11.5/24', { native: true })] },
      ],
      'netplan',
    );
    expect((await apply(hybrid)).code).toBe(0);
    expect(await read(hybrid.root, 'etc/netplan/50-cloud-init.yaml')).toBe(image.replace(`            - '${OS.eth1}'\n`, ''));
    expect((await stat(join(hybrid.root, 'etc/netplan/50-cloud-init.yaml'))).mode & 0o777).toBe(0o600);

    const individual = await machine({ netplan: image });
    await provision(
      individual.root,
      [
        { name: 'bond0', bonded: false, layer2: true, vlans: [] },
        { name: 'eth0', bonded: false, layer2: true, vlans: [vlan(1000, '192.168.10.5/24')] },
        { name: 'eth1', bonded: false, layer2: true, vlans: [] },
      ],
      'netplan',
    );
    expect((await apply(individual)).code).toBe(0);
    expect(await read(individual.root, 'etc/netplan/50-cloud-init.yaml')).toBe(
      image.replace(`            interfaces:\n            - ${OS.eth0}\n            - '${OS.eth1}'\n`, '            interfaces: []\n'),
    );
  });

  test('a netplan bond list the script cannot edit (a JSON-style document): user state 1099 naming the file, the file unchanged', async () => {
    posted.length = 0;
    const image = JSON.stringify({ network: { version: 2, bonds: { bond0: { interfaces: [OS.eth0, OS.eth1] } } } }) + '\n';
    const m = await machine({ netplan: image });
    await provision(
      m.root,
      [{ name: 'eth1', bonded: false, layer2: true, vlans: [vlan(1001, '192.168.11.5/24', { native: true })] }],
      'netplan',
    );
    expect((await apply(m)).code).not.toBe(0);
    expect(posted[1]).toEqual({
      state: 'failed',
      code: 1099,
      message: `metal-l2: could not remove ${OS.eth1} from the netplan bond: ${m.root}/etc/netplan/50-cloud-init.yaml: bonds in a flow-style (JSON) document`,
    });
    expect(await read(m.root, 'etc/netplan/50-cloud-init.yaml')).toBe(image);
  });

  test.each([DEBIAN, { awk: 'busybox', fetcher: 'wget' } as const])(
    'a stock image (no python3; $awk, $fetcher), a pretty-printed metadata document with escaped slashes: resolved and configured, states posted',
    async (stock) => {
      posted.length = 0;
      const m = await machine({}, stock);
      await expect(
        new Promise((resolve) => execFile(DASH, ['-c', 'command -v python3'], { env: { PATH: m.path } }, resolve)),
      ).resolves.toMatchObject({
        code: 127,
      });
      metadataText = JSON.stringify(metadata, null, 2).replace(/\//g, '\\/');
      try {
        await provision(m.root, [{ name: 'bond0', bonded: true, layer2: false, vlans: [vlan(1000, '192.168.10.5/24')] }], 'networkd');
        expect(await apply(m)).toEqual({ code: 0, stderr: expect.stringContaining('network configured: bond0=bond0') });
      } finally {
        metadataText = undefined;
      }
      expect(posted.map((p) => p.code)).toEqual([1001, 1002]);
      expect(await read(m.root, 'etc/systemd/network/10-bond0.network.d/60-metal-l2.conf')).toContain('VLAN=bond0.1000\n');
    },
  );

  test('a message with quotes and backslashes (from the metadata document) is posted as valid JSON, unchanged', async () => {
    posted.length = 0;
    const m = await machine({ interfaces: EQUINIX_INTERFACES });
    const network = metadata['network'] as { interfaces: unknown[] };
    const odd = 'no"such\\mac\tat all';
    metadataText = JSON.stringify({
      ...metadata,
      network: { ...network, interfaces: [...network.interfaces, { name: 'eth2', mac: odd }] },
    });
    try {
      await provision(
        m.root,
        [{ name: 'eth2', bonded: false, layer2: true, vlans: [vlan(1000, '192.168.10.5/24', { native: true })] }],
        'ifupdown',
      );
      expect((await apply(m)).code).not.toBe(0);
    } finally {
      metadataText = undefined;
    }
    expect(posted[1]?.message).toBe(`metal-l2: port eth2: no OS interface with MAC no"such\\mac\\tat all or named eth2`);
  });

  test('a truncated metadata document is never taken: no user state, exit non-zero once the fetch deadline passes', async () => {
    posted.length = 0;
    const m = await machine({ interfaces: EQUINIX_INTERFACES });
    metadataText = JSON.stringify(metadata).slice(0, -20);
    try {
      await provision(
        m.root,
        [{ name: 'eth1', bonded: false, layer2: true, vlans: [vlan(1000, '192.168.10.5/24', { native: true })] }],
        'ifupdown',
      );
      const result = await apply(m, 1);
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain('failed: metadata not available within 1 s');
    } finally {
      metadataText = undefined;
    }
    expect(posted).toEqual([]);
    expect(await read(m.root, 'etc/network/interfaces')).toBe(EQUINIX_INTERFACES);
  });

  test('an image with neither curl nor wget: the script says so at once and exits non-zero, before any file is touched', async () => {
    posted.length = 0;
    const m = await machine({ interfaces: EQUINIX_INTERFACES }, { awk: 'mawk', fetcher: 'none' });
    await provision(
      m.root,
      [{ name: 'eth1', bonded: false, layer2: true, vlans: [vlan(1000, '192.168.10.5/24', { native: true })] }],
      'ifupdown',
    );
    expect(await apply(m)).toEqual({ code: 1, stderr: 'metal-l2-net: failed: curl or wget is required to read the metadata service\n' });
    expect(posted).toEqual([]);
    expect(await read(m.root, 'etc/network/interfaces')).toBe(EQUINIX_INTERFACES);
  });
});
