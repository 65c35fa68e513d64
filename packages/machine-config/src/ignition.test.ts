import { describe, expect, test } from '@jest/globals';
import { ENDPOINT_UNIT, renderEndpointUnit } from './announcer-unit.js';
import type { RenderedAnnouncer } from './endpoint-announcer.js';
import { sha256Hex } from './envelope.js';
import { IGNITION_MARKER_PATH, IGNITION_STEP_PATH, IGNITION_UNIT, IGNITION_UNIT_CONTENTS } from './ignition.js';
import { InjectRefusalReason, extractOriginal, injectUserData, injectionHash, readInjectionHash } from './inject.js';
import type { InjectOutcome } from './inject.js';
import { renderMachineNetwork } from './render.js';
import type { PortConfig, RenderedNetwork } from './types.js';
import { CABPK_IGNITION_JOIN, IGNITION_V3_JOIN, minimalIgnition } from '../test/fixtures/ignition.js';
import { MODES, config, hybridBonded, hybridNative, controlPlaneAnnouncer, renderedNetwork } from '../test/fixtures/networks.js';

interface IgnFile {
  path: string;
  filesystem?: string;
  mode: number;
  contents: { source: string };
}
interface IgnUnit {
  name: string;
  enabled?: boolean;
  contents?: string;
}
interface Ign {
  ignition: { version: string };
  storage?: { files?: IgnFile[] };
  systemd?: { units?: IgnUnit[] };
}

function network(ports: PortConfig[] = hybridBonded): RenderedNetwork {
  return renderedNetwork(ports, 'networkd');
}

function announcer(): RenderedAnnouncer {
  return controlPlaneAnnouncer();
}

const IMAGE = 'ghcr.io/metal-l2/metal-l2:0.1.0';

function injected(out: InjectOutcome): { value: string; hash: string } {
  if (out.kind !== 'injected') throw new Error(`expected injected, got ${JSON.stringify(out)}`);
  return out;
}

const decode = (f: IgnFile): string => Buffer.from(f.contents.source.replace(/^data:;base64,/, ''), 'base64').toString('utf8');
const SPECS = [
  { spec: '2.3 (CABPK v1.7.9)', original: CABPK_IGNITION_JOIN },
  { spec: '3.4', original: IGNITION_V3_JOIN },
];

describe('injectUserData, format ignition', () => {
  describe.each(SPECS)('spec $spec', ({ original }) => {
    test.each(MODES)('$mode: CABPK entries first and unchanged, ours appended, the same hash as cloud-config', ({ ports }) => {
      const net = network(ports);
      const { value, hash } = injected(injectUserData({ value: original, format: 'ignition', network: net }));
      expect(hash).toBe(injectionHash(net));
      const before = JSON.parse(original) as Ign;
      const after = JSON.parse(value) as Ign;
      const family = before.ignition.version[0];
      const beforeFiles = before.storage?.files ?? [];
      const afterFiles = after.storage?.files ?? [];
      expect(afterFiles.slice(0, beforeFiles.length)).toEqual(beforeFiles);
      expect(after.systemd?.units?.slice(0, -1)).toEqual(before.systemd?.units);
      const ours = afterFiles.slice(beforeFiles.length);
      // The same files as the cloud-config part, in its order, then the step script and the marker.
      expect(ours.map((f) => f.path)).toEqual([
        ...net.files.map(
          (f, i) => expect.stringMatching(new RegExp(`^/opt/metal-l2/files/${String(i + 1).padStart(2, '0')}-`)) as unknown as string,
        ),
        '/opt/metal-l2/netcfg.json',
        '/opt/metal-l2/metal-l2-net',
        IGNITION_STEP_PATH,
        IGNITION_MARKER_PATH,
      ]);
      for (const [i, f] of net.files.entries()) expect(decode(ours[i] as IgnFile)).toBe(f.content);
      expect(ours.map((f) => f.mode)).toEqual([...net.files.map(() => 0o644), 0o600, 0o755, 0o755, 0o644]);
      for (const f of ours) expect(f.filesystem).toBe(family === '2' ? 'root' : undefined);
      expect(after.systemd?.units?.at(-1)).toEqual({ name: IGNITION_UNIT, enabled: true, contents: IGNITION_UNIT_CONTENTS });
      expect(decode(ours.at(-1) as IgnFile)).toBe(
        `X-Metal-L2: v1; inject=sha256:${hash}; orig=sha256:${sha256Hex(JSON.stringify(before))}\ncreated: \n`,
      );
      expect(readInjectionHash(value)).toBe(hash);
      expect(extractOriginal(value)).toBe(JSON.stringify(before));
    });

    test('idempotent: injecting the injected value again is unchanged; another network re-injects from the original', () => {
      const first = injected(injectUserData({ value: original, format: 'ignition', network: network() }));
      expect(injectUserData({ value: first.value, format: 'ignition', network: network() })).toEqual({
        kind: 'unchanged',
        hash: first.hash,
      });
      const other = injected(injectUserData({ value: first.value, format: 'ignition', network: network(hybridNative) }));
      expect(other.value).toBe(injected(injectUserData({ value: original, format: 'ignition', network: network(hybridNative) })).value);
      expect((JSON.parse(other.value) as Ign).systemd?.units?.filter((u) => u.name === IGNITION_UNIT)).toHaveLength(1);
    });

    test('control plane: the boot script writes the announcer files, and the announcer unit runs keepalived from the image (no apt-get)', () => {
      const ann = announcer();
      const input = { value: original, format: 'ignition', network: network(), announcer: ann, announcerImage: IMAGE };
      const { value, hash } = injected(injectUserData(input));
      expect(hash).toBe(injectionHash(network(), ann));
      const config = JSON.parse(value) as Ign;
      const files = config.storage?.files ?? [];
      const step = decode(files.find((f) => f.path === IGNITION_STEP_PATH) as IgnFile);
      expect(step.split('\n').filter((l) => l !== '' && !l.startsWith('#'))).toEqual([
        '/opt/metal-l2/metal-l2-net apply || exit 1',
        'mkdir -p /var/lib/metal-l2 && touch /var/lib/metal-l2/first-boot.done',
      ]);
      // Nothing of ours installs keepalived: Flatcar has no apt-get.
      expect(files.filter((f) => f.path.startsWith('/opt/metal-l2/') && decode(f).includes('apt-get'))).toEqual([]);
      const paths = files.map((f) => f.path);
      for (const f of ann.files) expect(files.some((g) => g.path.startsWith('/opt/metal-l2/files/') && decode(g) === f.content)).toBe(true);
      expect(paths.filter((p) => p.startsWith('/opt/metal-l2/files/'))).toHaveLength(network().files.length + ann.files.length);
      expect(config.systemd?.units?.slice(-2)).toEqual([
        { name: IGNITION_UNIT, enabled: true, contents: IGNITION_UNIT_CONTENTS },
        { name: ENDPOINT_UNIT, enabled: true, contents: renderEndpointUnit(IMAGE, { after: IGNITION_UNIT, before: 'kubeadm.service' }) },
      ]);
      // Idempotent with the announcer; another image (a chart upgrade) re-injects, under the same hash.
      expect(injectUserData({ ...input, value })).toEqual({ kind: 'unchanged', hash });
      const other = injected(injectUserData({ ...input, value, announcerImage: 'ghcr.io/metal-l2/metal-l2:0.2.0' }));
      expect(other.hash).toBe(hash);
      expect((JSON.parse(other.value) as Ign).systemd?.units?.filter((u) => u.name === ENDPOINT_UNIT)).toHaveLength(1);
      expect(extractOriginal(other.value)).toBe(JSON.stringify(JSON.parse(original)));
    });

    test('control plane without an announcer image: refused with its own reason, nothing written', () => {
      for (const announcerImage of [undefined, '']) {
        const out = injectUserData({
          value: original,
          format: 'ignition',
          network: network(),
          announcer: announcer(),
          ...(announcerImage === undefined ? {} : { announcerImage }),
        });
        expect(out).toMatchObject({ kind: 'refused', reason: InjectRefusalReason.AnnouncerImageNotConfigured });
        expect(out.kind === 'refused' ? out.message : '').toContain('--announcer-image');
      }
    });
  });

  test('the unit: oneshot before kubeadm.service (which requires it), after the network is online, once per machine', () => {
    expect(IGNITION_UNIT_CONTENTS).toContain('Before=kubeadm.service\n');
    expect(IGNITION_UNIT_CONTENTS).toContain('RequiredBy=kubeadm.service\n');
    expect(IGNITION_UNIT_CONTENTS).toContain('After=network-online.target\n');
    expect(IGNITION_UNIT_CONTENTS).toContain('ConditionPathExists=!/var/lib/metal-l2/first-boot.done\n');
    expect(IGNITION_UNIT_CONTENTS).toContain('Type=oneshot\n');
  });

  test.each(['2.0.0', '2.1.0', '2.2.0', '2.4.0', '3.0.0', '3.5.0'])(
    'spec %s without storage or systemd: created, and taken away again when the original is extracted',
    (version) => {
      const original = minimalIgnition(version);
      const { value } = injected(injectUserData({ value: original, format: 'ignition', network: network() }));
      const marker = (JSON.parse(value) as Ign).storage?.files?.find((f) => f.path === IGNITION_MARKER_PATH) as IgnFile;
      expect(decode(marker)).toMatch(/\ncreated: storage storage\.files systemd systemd\.units\n$/);
      expect(extractOriginal(value)).toBe(original);
      expect(injectUserData({ value, format: 'ignition', network: network() }).kind).toBe('unchanged');
    },
  );

  test('CAPP templates the whole value: Go placeholders in CABPK strings survive, ours carry no template syntax', () => {
    const original = JSON.stringify({
      ignition: { version: '2.3.0' },
      storage: { files: [{ filesystem: 'root', path: '/etc/capp', contents: { source: 'data:,{{ .kubernetesVersion }}' }, mode: 420 }] },
    });
    const { value } = injected(
      injectUserData({ value: original, format: 'ignition', network: network(), announcer: announcer(), announcerImage: IMAGE }),
    );
    expect(value.match(/\{\{/g)).toHaveLength(1);
    expect(value).toContain('data:,{{ .kubernetesVersion }}');
  });

  test.each([
    {
      name: 'spec 1 (ignitionVersion)',
      value: '{"ignitionVersion":1,"storage":{}}',
      reason: InjectRefusalReason.IgnitionNotSupported,
      says: 'spec 1',
    },
    {
      name: 'spec 2.5.0 (experimental in Ignition v0.35.0)',
      value: minimalIgnition('2.5.0'),
      reason: InjectRefusalReason.IgnitionNotSupported,
      says: '"2.5.0"',
    },
    {
      name: 'an experimental spec',
      value: minimalIgnition('3.6.0-experimental'),
      reason: InjectRefusalReason.IgnitionNotSupported,
      says: '"3.6.0-experimental"',
    },
    {
      name: 'an unknown major version',
      value: minimalIgnition('4.0.0'),
      reason: InjectRefusalReason.IgnitionNotSupported,
      says: '"4.0.0"',
    },
    { name: 'not JSON', value: '#cloud-config\n', reason: InjectRefusalReason.UnsupportedContent, says: 'not JSON' },
    { name: 'no ignition.version', value: '{"storage":{}}', reason: InjectRefusalReason.UnsupportedContent, says: 'no ignition.version' },
  ])('refused: $name', ({ value, reason, says }) => {
    const out = injectUserData({ value, format: 'ignition', network: network() });
    expect(out).toMatchObject({ kind: 'refused', reason });
    expect(out.kind === 'refused' ? out.message : '').toContain(says);
  });

  test.each(['ifupdown', 'netplan'] as const)('a network rendered for %s is refused: Flatcar has systemd-networkd only', (renderer) => {
    const out = renderMachineNetwork(config(hybridBonded, renderer));
    if (out.kind !== 'rendered') throw new Error('fixture does not render');
    expect(injectUserData({ value: CABPK_IGNITION_JOIN, format: 'ignition', network: out.network })).toMatchObject({
      kind: 'refused',
      reason: InjectRefusalReason.IgnitionNeedsNetworkd,
      message: expect.stringContaining(`rendered for ${renderer}: set spec.os.renderer: networkd`) as unknown as string,
    });
  });

  test('a marker that cannot be read is refused, not injected twice', () => {
    const { value } = injected(injectUserData({ value: CABPK_IGNITION_JOIN, format: 'ignition', network: network() }));
    const config = JSON.parse(value) as Ign;
    const marker = config.storage?.files?.find((f) => f.path === IGNITION_MARKER_PATH) as IgnFile;
    marker.contents.source = `data:;base64,${Buffer.from('X-Metal-L2: v9; garbage\n').toString('base64')}`;
    expect(injectUserData({ value: JSON.stringify(config), format: 'ignition', network: network() })).toMatchObject({
      kind: 'refused',
      reason: InjectRefusalReason.MalformedEnvelope,
    });
  });
});
