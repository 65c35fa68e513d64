// Ignition's own programs judge the injected configs (hack/build-ignition.sh builds them from the Go
// module proxy, cached by version): ignition-validate of the config's spec family finds nothing in
// any of them, and Ignition's files stage, run against an empty root directory, writes our files
// and enables our units (a control plane's announcer too) beside CABPK's, as at a Flatcar machine's
// first boot.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  ENDPOINT_UNIT,
  IGNITION_MARKER_PATH,
  IGNITION_STEP_PATH,
  IGNITION_UNIT,
  IGNITION_UNIT_CONTENTS,
  IGNITION_SPEC_VERSIONS,
  KUBEADM_UNIT,
  renderEndpointUnit,
} from '../src/index.js';
import { injectUserData } from '../src/index.js';
import type { PortConfig, RenderedAnnouncer, RenderedNetwork } from '../src/index.js';
import { CABPK_IGNITION_JOIN, CABPK_OWN_FINDINGS, IGNITION_V3_JOIN, minimalIgnition } from './fixtures/ignition.js';
import { MODES, hybridBonded, controlPlaneAnnouncer, renderedNetwork } from './fixtures/networks.js';
import { applyIgnitionFiles, ignitionBinaries, validateIgnition } from './support/ignition.js';

// The first run builds Ignition (minutes on two shared cores: .ci/run builds it beforehand); later
// runs find it cached. Inside the core stage's 600 s a file.
beforeAll(async () => {
  await ignitionBinaries();
}, 540_000);

const roots: string[] = [];
afterAll(async () => {
  await Promise.all(roots.map((r) => rm(r, { recursive: true, force: true })));
});

function network(ports: PortConfig[]): RenderedNetwork {
  return renderedNetwork(ports, 'networkd');
}

function announcer(): RenderedAnnouncer {
  return controlPlaneAnnouncer();
}

/** The image the announcer unit runs keepalived from (the chart's default is its own image). */
const IMAGE = 'ghcr.io/metal-l2/metal-l2:0.1.0';

function inject(original: string, ports: PortConfig[], ann?: RenderedAnnouncer): string {
  const out = injectUserData({
    value: original,
    format: 'ignition',
    network: network(ports),
    ...(ann === undefined ? {} : { announcer: ann, announcerImage: IMAGE }),
  });
  if (out.kind !== 'injected') throw new Error(`expected injected, got ${JSON.stringify(out)}`);
  return out.value;
}

const SPECS = [
  { spec: '2.3 (CABPK v1.7.9)', original: CABPK_IGNITION_JOIN, findings: CABPK_OWN_FINDINGS },
  { spec: '3.4', original: IGNITION_V3_JOIN, findings: [] },
];

describe('ignition-validate (Ignition v0.35.0 for spec 2, v2.24.0 for spec 3)', () => {
  test.each(SPECS)('the original of spec $spec: only its own explained findings', async ({ original, findings }) => {
    expect(await validateIgnition(original)).toEqual({ code: 0, findings });
  });

  describe.each(SPECS)('spec $spec', ({ original, findings }) => {
    test.each(MODES)('$mode worker: no errors, no warnings of ours', async ({ ports }) => {
      expect(await validateIgnition(inject(original, ports))).toEqual({ code: 0, findings });
    });

    test('hybrid-bonded control plane (keepalived from the image, in its unit): no errors, no warnings of ours', async () => {
      expect(await validateIgnition(inject(original, hybridBonded, announcer()))).toEqual({ code: 0, findings });
    });
  });

  test.each([...IGNITION_SPEC_VERSIONS['2'], ...IGNITION_SPEC_VERSIONS['3']])(
    'every served version (%s), from a config holding nothing else: no errors, no warnings',
    async (version) => {
      expect(await validateIgnition(inject(minimalIgnition(version), hybridBonded, announcer()))).toEqual({ code: 0, findings: [] });
    },
  );

  test('the validator does judge: a unit it cannot parse is an error (so silence above means something)', async () => {
    const broken = JSON.stringify({ ignition: { version: '2.3.0' }, systemd: { units: [{ name: 'x.service', contents: '[Unit\n' }] } });
    const result = await validateIgnition(broken);
    expect(result.code).not.toBe(0);
    expect(result.findings.join('\n')).toMatch(/unit|section/i);
  });
});

/** The config without `passwd`: users are made by the root's own useradd (an empty directory has none; ignition-apply refuses them). */
function withoutUsers(config: string): string {
  const { passwd: _passwd, ...rest } = JSON.parse(config) as Record<string, unknown>;
  return JSON.stringify(rest);
}

describe("Ignition's files stage against an empty root (as root: it sets ownership)", () => {
  test.each(SPECS)('spec $spec: our files with their modes, our units enabled beside kubeadm.service', async ({ original }) => {
    const root = await mkdtemp(join(tmpdir(), 'ignition-root-'));
    roots.push(root);
    await applyIgnitionFiles(inject(withoutUsers(original), hybridBonded, announcer()), root);
    const mode = async (p: string): Promise<string> => ((await stat(join(root, p))).mode & 0o777).toString(8);
    expect(await mode('/opt/metal-l2/metal-l2-net')).toBe('755');
    expect(await mode('/opt/metal-l2/netcfg.json')).toBe('600');
    expect(await mode(IGNITION_STEP_PATH)).toBe('755');
    expect(await readFile(join(root, IGNITION_MARKER_PATH), 'utf8')).toMatch(
      /^X-Metal-L2: v1; inject=sha256:[0-9a-f]{64}; orig=sha256:[0-9a-f]{64}\n/,
    );
    const shipped = await readdir(join(root, '/opt/metal-l2/files'));
    expect(shipped.length).toBe(network(hybridBonded).files.length + announcer().files.length);
    expect(await readFile(join(root, '/etc/systemd/system', IGNITION_UNIT), 'utf8')).toBe(IGNITION_UNIT_CONTENTS);
    const endpointUnit = renderEndpointUnit(IMAGE, { after: IGNITION_UNIT, before: KUBEADM_UNIT });
    expect(await readFile(join(root, '/etc/systemd/system', ENDPOINT_UNIT), 'utf8')).toBe(endpointUnit);
    expect(await readFile(join(root, '/etc/kubeadm.sh'), 'utf8')).toContain('kubeadm join --config /etc/kubeadm.yml');
    // Spec 2 enables through a preset file, spec 3 too (Ignition v2 writes the same file).
    const preset = await readFile(join(root, '/etc/systemd/system-preset/20-ignition.preset'), 'utf8');
    expect(preset.split('\n')).toEqual(
      expect.arrayContaining([`enable ${IGNITION_UNIT}`, `enable ${ENDPOINT_UNIT}`, 'enable kubeadm.service']),
    );
  });
});

// systemd's own check of unit files: every key known, every command absolute and executable, every
// unit they name loadable. Our units as Ignition writes them, beside stand-ins for CABPK's
// kubeadm.service (its command, /etc/kubeadm.sh, is not on this machine) and Flatcar's containerd.service.
// The announcer unit's /usr/bin/ctr is Debian's containerd here (the node purpose of
// hack/install-debian-packages.sh), at the path Flatcar has it.
describe('systemd-analyze verify', () => {
  const verify = async (units: Record<string, string>): Promise<{ code: number; output: string }> => {
    const dir = await mkdtemp(join(tmpdir(), 'units-'));
    roots.push(dir);
    for (const [name, text] of Object.entries(units)) await writeFile(join(dir, name), text);
    const files = Object.keys(units).map((n) => join(dir, n));
    return promisify(execFile)('systemd-analyze', ['verify', '--man=no', ...files]).then(
      ({ stdout, stderr }) => ({ code: 0, output: `${stdout}${stderr}` }),
      (err: { code?: number; stdout?: string; stderr?: string }) => ({
        code: err.code ?? -1,
        output: `${err.stdout ?? ''}${err.stderr ?? ''}`,
      }),
    );
  };

  test('finds nothing in metal-l2.service and the announcer unit, and does judge (a unit with an unknown key and a relative command)', async () => {
    const config = JSON.parse(inject(CABPK_IGNITION_JOIN, hybridBonded, announcer())) as {
      systemd: { units: { name: string; contents: string }[] };
    };
    const unit = (name: string): string => config.systemd.units.find((u) => u.name === name)?.contents ?? '';
    const standIn = (what: string): string => `[Unit]\nDescription=stand-in for ${what}\n[Service]\nType=oneshot\nExecStart=/bin/true\n`;
    expect(
      await verify({
        [IGNITION_UNIT]: unit(IGNITION_UNIT),
        [ENDPOINT_UNIT]: unit(ENDPOINT_UNIT),
        [KUBEADM_UNIT]: standIn("CABPK's kubeadm.service"),
        'containerd.service': standIn("Flatcar's containerd.service"),
      }),
    ).toEqual({ code: 0, output: '' });
    const broken = await verify({ 'broken.service': '[Service]\nExecStart=relative\nBogusKey=1\n' });
    expect(broken.code).not.toBe(0);
    expect(broken.output).toContain("Unknown key 'BogusKey'");
  });
});
