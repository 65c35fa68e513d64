import { describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { renderCloudConfigPart } from './cloud-config.js';
import { parseEnvelope } from './envelope.js';
import { AnnouncerIssueCode, renderEndpointAnnouncer } from './endpoint-announcer.js';
import type { EndpointAnnouncerInput, RenderedAnnouncer } from './endpoint-announcer.js';
import { FORBIDDEN_IN_PART, injectUserData } from './inject.js';
import { APISERVER_CHECK_PATH, ENDPOINT_STATE_PATH, KEEPALIVED_CONF_PATH, NOTIFY_SCRIPT_PATH } from './keepalived.js';
import { renderMachineNetwork } from './render.js';
import type { RenderedNetwork } from './types.js';
import { ConfigIssueCode } from './validate.js';
import { CABPK_JOIN } from '../test/fixtures/bootstrap.js';
import { config, hybridBonded, hybridNative, vlan } from '../test/fixtures/networks.js';

const ENDPOINT: EndpointAnnouncerInput = {
  address: '192.168.10.200',
  prefix: 24,
  port: 6443,
  vxlan: 1000,
  virtualRouterID: 51,
  ports: hybridBonded,
};

function announcer(input: Partial<EndpointAnnouncerInput> = {}): RenderedAnnouncer {
  const out = renderEndpointAnnouncer({ ...ENDPOINT, ...input });
  if (out.kind !== 'rendered') throw new Error(`expected rendered, got ${JSON.stringify(out)}`);
  return out.announcer;
}

function issueCodes(input: Partial<EndpointAnnouncerInput>): string[] {
  const out = renderEndpointAnnouncer({ ...ENDPOINT, ...input });
  return out.kind === 'invalid' ? out.issues.map((i) => i.code) : [];
}

function network(ports = hybridBonded): RenderedNetwork {
  const out = renderMachineNetwork(config(ports));
  if (out.kind !== 'rendered') throw new Error('fixture does not render');
  return out.network;
}

function fileContent(a: RenderedAnnouncer, path: string): string {
  const f = a.files.find((x) => x.path === path);
  if (f === undefined) throw new Error(`no ${path}`);
  return f.content;
}

/** The decoded content of one write_files entry of our part (each entry: path, owner, permissions, encoding, content). */
function shippedContent(part: string, path: string): string {
  const lines = part.split('\n');
  const at = lines.indexOf(`- path: ${path}`);
  const content = lines.slice(at + 1, at + 5).find((l) => l.startsWith('  content: '));
  if (at < 0 || content === undefined) throw new Error(`no ${path} in the part`);
  return Buffer.from(content.slice('  content: '.length), 'base64').toString('utf8');
}

describe('renderEndpointAnnouncer', () => {
  test('a tagged VLAN on the bond: one VRRP instance on the VLAN interface, by port placeholder', () => {
    const a = announcer();
    expect(a.interface).toBe('@port:bond0@.1000');
    const conf = fileContent(a, KEEPALIVED_CONF_PATH);
    expect(conf).toContain('    interface @port:bond0@.1000\n');
    expect(conf).toContain('    virtual_router_id 51\n');
    expect(conf).toContain('    advert_int 1\n');
    expect(conf).toContain('    state BACKUP\n');
    expect(conf).toContain('    virtual_ipaddress {\n        192.168.10.200/24\n    }\n');
    expect(conf).toContain(`    script "${APISERVER_CHECK_PATH}"\n`);
    expect(conf).toContain('    track_script {\n        metal_l2_apiserver\n    }\n');
    // multicast VRRP: no unicast peers (a machine cannot know its peers at first boot)
    expect(conf).not.toContain('unicast');
    expect(a.files.map((f) => [f.path, f.mode])).toEqual([
      [KEEPALIVED_CONF_PATH, '0644'],
      [APISERVER_CHECK_PATH, '0755'],
      [NOTIFY_SCRIPT_PATH, '0755'],
    ]);
    expect(fileContent(a, APISERVER_CHECK_PATH)).toBe(
      '#!/bin/bash\n' +
        '# metal-l2: keepalived holds the control-plane VIP only while this succeeds: the local API server\n' +
        '# accepts TCP connections on port 6443.\n' +
        'exec 3<>/dev/tcp/127.0.0.1/6443\n',
    );
  });

  test('every state change of the instance is kept in the state file by the notify script', () => {
    const a = announcer();
    const conf = fileContent(a, KEEPALIVED_CONF_PATH);
    // inside the instance block, after its track_script: keepalived appends INSTANCE <name> <state> <priority>
    expect(conf).toContain(`    track_script {\n        metal_l2_apiserver\n    }\n    notify "${NOTIFY_SCRIPT_PATH}"\n}\n`);
    expect(ENDPOINT_STATE_PATH).toBe('/run/metal-l2/endpoint-state');
    expect(fileContent(a, NOTIFY_SCRIPT_PATH)).toBe(
      '#!/bin/sh\n' +
        '# metal-l2: keepalived calls this on every state change; the state of metal_l2_endpoint (MASTER, BACKUP,\n' +
        '# FAULT, STOP) is kept in /run/metal-l2/endpoint-state.\n' +
        '[ "$1" = INSTANCE ] && [ "$2" = metal_l2_endpoint ] || exit 0\n' +
        'mkdir -p /run/metal-l2\n' +
        'printf \'%s\\n\' "$3" > /run/metal-l2/endpoint-state.$$ && mv -f /run/metal-l2/endpoint-state.$$ /run/metal-l2/endpoint-state\n',
    );
  });

  test('the notify script leaves groups and other instances alone (run under sh, with no tools on PATH)', () => {
    const script = fileContent(announcer(), NOTIFY_SCRIPT_PATH);
    const run = (...args: string[]) =>
      spawnSync('/bin/sh', ['-c', script, 'metal-l2-notify', ...args], { env: { PATH: '/nonexistent' }, encoding: 'utf8' });
    expect(spawnSync('sh', ['-n', '-c', script]).status).toBe(0);
    for (const args of [
      ['GROUP', 'metal_l2_endpoint', 'MASTER', '100'],
      ['INSTANCE', 'VI_1', 'MASTER', '100'],
    ]) {
      const r = run(...args);
      expect([r.status, r.stderr]).toEqual([0, '']);
    }
    // ours gets past the filter: it needs mkdir, not found on this PATH
    const ours = run('INSTANCE', 'metal_l2_endpoint', 'MASTER', '100');
    expect(ours.status).not.toBe(0);
    expect(ours.stderr).toContain('mkdir');
  });

  test('a native VLAN: the VIP goes on the port interface itself', () => {
    const a = announcer({ ports: hybridNative });
    expect(a.interface).toBe('@port:eth1@');
    expect(fileContent(a, KEEPALIVED_CONF_PATH)).toContain('    interface @port:eth1@\n');
  });

  test('port, advertisement interval and router id reach the files', () => {
    const a = announcer({ port: 8443, advertIntervalSec: 3, virtualRouterID: 255 });
    const conf = fileContent(a, KEEPALIVED_CONF_PATH);
    expect(conf).toContain('    advert_int 3\n');
    expect(conf).toContain('    interval 3\n');
    expect(conf).toContain('    virtual_router_id 255\n');
    expect(fileContent(a, APISERVER_CHECK_PATH)).toContain('/dev/tcp/127.0.0.1/8443\n');
  });

  test('deterministic, and free of template syntax', () => {
    expect(JSON.stringify(announcer())).toBe(JSON.stringify(announcer()));
    const text = JSON.stringify(announcer());
    for (const bad of FORBIDDEN_IN_PART) expect(text).not.toContain(bad);
  });

  test.each<[string, Partial<EndpointAnnouncerInput>, string[]]>([
    ['not an address', { address: '192.168.10' }, [AnnouncerIssueCode.InvalidEndpointAddress]],
    ['IPv6', { address: 'fd00::5' }, [AnnouncerIssueCode.EndpointAddressNotIPv4]],
    ['prefix 0', { prefix: 0 }, [AnnouncerIssueCode.InvalidEndpointPrefix]],
    ['prefix 33', { prefix: 33 }, [AnnouncerIssueCode.InvalidEndpointPrefix]],
    ['port 0', { port: 0 }, [AnnouncerIssueCode.InvalidEndpointPort]],
    ['router id 0', { virtualRouterID: 0 }, [AnnouncerIssueCode.InvalidVirtualRouterID]],
    ['router id 256', { virtualRouterID: 256 }, [AnnouncerIssueCode.InvalidVirtualRouterID]],
    ['fractional interval', { advertIntervalSec: 0.5 }, [AnnouncerIssueCode.InvalidAdvertInterval]],
    ['vxlan 0', { vxlan: 0 }, [AnnouncerIssueCode.InvalidEndpointVlan]],
    ['VLAN not on the machine', { vxlan: 1002 }, [AnnouncerIssueCode.EndpointVlanNotOnMachine]],
    ['the VIP outside the VLAN subnet', { address: '192.168.11.200' }, [AnnouncerIssueCode.EndpointAddressOutsideVlan]],
    ['the VIP is the machine address', { address: '192.168.10.5' }, [AnnouncerIssueCode.EndpointAddressIsMachineAddress]],
    [
      'a VLAN without an address',
      { ports: [{ name: 'bond0', bonded: true, layer2: false, vlans: [{ vxlan: 1000, native: false, addresses: [], routes: [] }] }] },
      [AnnouncerIssueCode.EndpointVlanWithoutAddress],
    ],
    [
      'a port that is not a Metal port name (the network rules apply)',
      { ports: [{ name: 'Bond0;x', bonded: true, layer2: false, vlans: [vlan(1000, '192.168.10.5/24')] }] },
      [ConfigIssueCode.InvalidPortName],
    ],
  ])('%s: refused with a specific issue', (_name, input, codes) => {
    expect(issueCodes(input)).toEqual(codes);
  });

  test('issues say what is wrong and where', () => {
    const out = renderEndpointAnnouncer({ ...ENDPOINT, address: '192.168.11.200' });
    expect(out).toEqual({
      kind: 'invalid',
      issues: [
        {
          code: AnnouncerIssueCode.EndpointAddressOutsideVlan,
          path: ['address'],
          message: "endpoint address 192.168.11.200 is outside this machine's subnet on VLAN 1000 on port bond0 (192.168.10.5/24)",
        },
      ],
    });
  });
});

describe('the announcer in the injected part', () => {
  test('without an announcer the part is what it always was: one runcmd line, the network files only', () => {
    const part = renderCloudConfigPart(network());
    expect(part).toBe(renderCloudConfigPart(network(), undefined));
    expect(part.split('runcmd:\n')[1]).toBe("- '/opt/metal-l2/metal-l2-net apply || exit 1'\n");
    expect(part).not.toContain('/opt/metal-l2/files/02-');
  });

  test('files shipped after the network files and written by the boot script; commands after the network step', () => {
    const a = announcer();
    const part = renderCloudConfigPart(network(), a);
    const boot = shippedContent(part, '/opt/metal-l2/netcfg.json');
    const bootConfig = JSON.parse(boot) as { files: { source: string; path: string }[] };
    expect(bootConfig.files).toEqual([
      { source: '/opt/metal-l2/files/01-60-metal-l2.cfg', path: '/etc/network/interfaces.d/60-metal-l2.cfg', mode: '0644' },
      { source: '/opt/metal-l2/files/02-keepalived.conf', path: KEEPALIVED_CONF_PATH, mode: '0644' },
      { source: '/opt/metal-l2/files/03-metal-l2-apiserver-check', path: APISERVER_CHECK_PATH, mode: '0755' },
      { source: '/opt/metal-l2/files/04-metal-l2-notify', path: NOTIFY_SCRIPT_PATH, mode: '0755' },
    ]);
    expect(shippedContent(part, '/opt/metal-l2/files/04-metal-l2-notify')).toBe(fileContent(a, NOTIFY_SCRIPT_PATH));
    expect(shippedContent(part, '/opt/metal-l2/files/02-keepalived.conf')).toBe(fileContent(a, KEEPALIVED_CONF_PATH));
    expect(part.split('runcmd:\n')[1]).toBe(
      ["- '/opt/metal-l2/metal-l2-net apply || exit 1'", ...a.commands.map((c) => `- '${c}'`), ''].join('\n'),
    );
    for (const bad of FORBIDDEN_IN_PART) expect(part).not.toContain(bad);
  });

  test('injection is idempotent with the announcer, and adding it re-wraps from the original', () => {
    const a = announcer();
    const plain = injectUserData({ value: CABPK_JOIN, format: 'cloud-config', network: network() });
    if (plain.kind !== 'injected') throw new Error('not injected');
    const withAnnouncer = injectUserData({ value: plain.value, format: 'cloud-config', network: network(), announcer: a });
    if (withAnnouncer.kind !== 'injected') throw new Error('not re-wrapped');
    expect(withAnnouncer.hash).not.toBe(plain.hash);
    const envelope = parseEnvelope(withAnnouncer.value);
    expect(envelope.kind === 'envelope' && envelope.original).toBe(CABPK_JOIN);
    expect(injectUserData({ value: withAnnouncer.value, format: 'cloud-config', network: network(), announcer: announcer() })).toEqual({
      kind: 'unchanged',
      hash: withAnnouncer.hash,
    });
    // a different endpoint is a different part
    const moved = injectUserData({
      value: withAnnouncer.value,
      format: 'cloud-config',
      network: network(),
      announcer: announcer({ virtualRouterID: 52 }),
    });
    expect(moved.kind).toBe('injected');
  });
});
