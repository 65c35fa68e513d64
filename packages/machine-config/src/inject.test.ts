import { describe, expect, test } from '@jest/globals';
import { boundaryCandidate, parseEnvelope, sha256Hex } from './envelope.js';
import { FORBIDDEN_IN_PART, InjectRefusalReason, extractOriginal, injectUserData, readInjectionHash } from './inject.js';
import type { InjectOutcome } from './inject.js';
import { renderMachineNetwork } from './render.js';
import type { RenderedNetwork } from './types.js';
import { CABPK_JOIN, CAPP_JOIN, EXISTING_MULTIPART, PLAIN_CLOUD_CONFIG, SHELL_SCRIPT } from '../test/fixtures/bootstrap.js';
import { config, hybridBonded, hybridNative } from '../test/fixtures/networks.js';

function network(ports = hybridBonded): RenderedNetwork {
  const out = renderMachineNetwork(config(ports));
  if (out.kind !== 'rendered') throw new Error('fixture does not render');
  return out.network;
}

function injected(out: InjectOutcome): { value: string; hash: string } {
  if (out.kind !== 'injected') throw new Error(`expected injected, got ${JSON.stringify(out)}`);
  return out;
}

describe('injectUserData', () => {
  test.each([
    { name: 'CABPK cloud-config with the Jinja header', original: CABPK_JOIN, wrapped: true },
    { name: 'CABPK + CAPP Go placeholders', original: CAPP_JOIN, wrapped: true },
    { name: 'plain #cloud-config', original: PLAIN_CLOUD_CONFIG, wrapped: true },
    { name: '#! shell script', original: SHELL_SCRIPT, wrapped: true },
    { name: 'existing MIME multipart: embedded as it is, its parts untouched', original: EXISTING_MULTIPART, wrapped: false },
    { name: 'original without a final newline', original: '#cloud-config\nruncmd: [echo hi]', wrapped: true },
  ])('$name: original kept byte for byte, marker in the top headers', ({ original, wrapped }) => {
    const { value, hash } = injected(injectUserData({ value: original, format: 'cloud-config', network: network() }));
    const head = value.slice(0, 4096);
    expect(head).toMatch(/^Content-Type: multipart\/mixed; boundary="==metal-l2-[0-9a-f]{24}=="\nMIME-Version: 1\.0\n/);
    expect(head).toContain(`X-Metal-L2: v1; inject=sha256:${hash}; orig=sha256:${sha256Hex(original)}\n`);
    expect(extractOriginal(value)).toBe(original);
    expect(readInjectionHash(value)).toBe(hash);
    const boundary = /boundary="([^"]+)"/.exec(value)?.[1] ?? '';
    const partOneStart = value.indexOf(`--${boundary}\n`) + boundary.length + 3;
    const partOne = value.slice(partOneStart, value.indexOf(`\n--${boundary}\n`, partOneStart));
    expect(partOne).toBe(
      wrapped
        ? `Content-Type: text/plain; charset="utf-8"\nContent-Transfer-Encoding: 8bit\nContent-Disposition: attachment; filename="user-data"\n\n${original}`
        : original,
    );
  });

  test('our part: cloud-config with merge_how prepend, base64 files and one fail-closed runcmd line', () => {
    const { value, hash } = injected(injectUserData({ value: CABPK_JOIN, format: undefined, network: network() }));
    const parsed = parseEnvelope(value);
    if (parsed.kind !== 'envelope') throw new Error('not an envelope');
    expect(sha256Hex(parsed.part)).toBe(hash);
    expect(parsed.part).toMatch(/^#cloud-config\n/);
    expect(parsed.part).toContain(
      'merge_how:\n- name: list\n  settings: [prepend]\n- name: dict\n  settings: [no_replace, recurse_list]\n- name: str\n  settings: []\n',
    );
    expect(parsed.part).toContain("runcmd:\n- '/opt/metal-l2/metal-l2-net apply || exit 1'\n");
    const paths = [...parsed.part.matchAll(/^- path: (.*)$/gm)].map((m) => m[1]);
    expect(paths).toEqual(['/opt/metal-l2/files/01-60-metal-l2.cfg', '/opt/metal-l2/netcfg.json', '/opt/metal-l2/metal-l2-net']);
    const contents = [...parsed.part.matchAll(/^ {2}content: (.*)$/gm)].map((m) => Buffer.from(m[1] ?? '', 'base64').toString('utf8'));
    expect(contents[0]).toBe(network().files[0]?.content);
    expect(JSON.parse(contents[1] ?? '')).toMatchObject({
      renderer: 'ifupdown',
      files: [{ source: '/opt/metal-l2/files/01-60-metal-l2.cfg', path: '/etc/network/interfaces.d/60-metal-l2.cfg', mode: '0644' }],
    });
    expect(contents[2]).toMatch(/^#!\/bin\/sh\n/);
  });

  test.each([
    { name: 'jinja cloud-config', original: CABPK_JOIN },
    { name: 'shell script', original: SHELL_SCRIPT },
    { name: 'existing multipart', original: EXISTING_MULTIPART },
  ])('$name: no template syntax or installer keys anywhere in what we add', ({ original }) => {
    const { value } = injected(injectUserData({ value: original, format: 'cloud-config', network: network(hybridNative) }));
    const ours = value.replace(original, '');
    for (const bad of FORBIDDEN_IN_PART) expect(ours).not.toContain(bad);
  });

  test('inject twice: the second time is unchanged, with the same hash', () => {
    const first = injected(injectUserData({ value: CABPK_JOIN, format: 'cloud-config', network: network() }));
    expect(injectUserData({ value: first.value, format: 'cloud-config', network: network() })).toEqual({
      kind: 'unchanged',
      hash: first.hash,
    });
  });

  test('network changed: re-wrapped from the original, never nested', () => {
    const first = injected(injectUserData({ value: CABPK_JOIN, format: 'cloud-config', network: network(hybridBonded) }));
    const second = injected(injectUserData({ value: first.value, format: 'cloud-config', network: network(hybridNative) }));
    expect(second.hash).not.toBe(first.hash);
    expect(extractOriginal(second.value)).toBe(CABPK_JOIN);
    expect(second.value.match(/X-Metal-L2:/g)).toHaveLength(1);
    expect(second.value).toBe(
      injected(injectUserData({ value: CABPK_JOIN, format: 'cloud-config', network: network(hybridNative) })).value,
    );
  });

  test('an existing multipart that was injected: re-injection extracts the original multipart', () => {
    const first = injected(injectUserData({ value: EXISTING_MULTIPART, format: 'cloud-config', network: network() }));
    expect(injectUserData({ value: first.value, format: 'cloud-config', network: network() }).kind).toBe('unchanged');
    expect(extractOriginal(first.value)).toBe(EXISTING_MULTIPART);
  });

  test('original edited after injection (marker orig hash differs): re-wrapped from the edited original', () => {
    const first = injected(injectUserData({ value: CABPK_JOIN, format: 'cloud-config', network: network() }));
    const edited = first.value.replace('apt-get install -y kubelet', 'apt-get install -y kubelet kubectl');
    const again = injected(injectUserData({ value: edited, format: 'cloud-config', network: network() }));
    expect(extractOriginal(again.value)).toBe(CABPK_JOIN.replace('kubelet"', 'kubelet kubectl"'));
    expect(again.hash).toBe(first.hash);
  });

  test('boundary collision: an original containing the boundary gets another one', () => {
    const first = injected(injectUserData({ value: PLAIN_CLOUD_CONFIG, format: 'cloud-config', network: network() }));
    const usual = boundaryCandidate(first.hash, 0);
    expect(first.value).toContain(`boundary="${usual}"`);
    const colliding = `${PLAIN_CLOUD_CONFIG}# --${usual}\n`;
    const out = injected(injectUserData({ value: colliding, format: 'cloud-config', network: network() }));
    const boundary = /boundary="([^"]+)"/.exec(out.value)?.[1] ?? '';
    expect(boundary).toBe(boundaryCandidate(first.hash, 1));
    expect(colliding).not.toContain(boundary);
    expect(extractOriginal(out.value)).toBe(colliding);
    expect(injectUserData({ value: out.value, format: 'cloud-config', network: network() }).kind).toBe('unchanged');
  });

  test.each([
    {
      name: 'ignition of a spec version that cannot be served is refused (ignition.test.ts has every case)',
      format: 'ignition',
      value: '{"ignition":{"version":"2.5.0-experimental"}}',
      reason: InjectRefusalReason.IgnitionNotSupported,
      message: /"2\.5\.0-experimental" is not supported/,
    },
    {
      name: 'an unknown format is refused',
      format: 'talos',
      value: PLAIN_CLOUD_CONFIG,
      reason: InjectRefusalReason.UnsupportedFormat,
      message: /"talos"/,
    },
    {
      name: 'content that is neither cloud-config, script nor MIME',
      format: 'cloud-config',
      value: '#include\nhttps://example.com/ud\n',
      reason: InjectRefusalReason.UnsupportedContent,
      message: /"#include"/,
    },
    {
      name: 'a marker whose envelope is broken',
      format: 'cloud-config',
      value: 'Content-Type: multipart/mixed; boundary="x"\nMIME-Version: 1.0\nX-Metal-L2: v1; inject=sha256:zz\n\nbody',
      reason: InjectRefusalReason.MalformedEnvelope,
      message: /cannot be read/,
    },
  ])('$name', ({ format, value, reason, message }) => {
    const out = injectUserData({ value, format, network: network() });
    expect(out).toEqual({ kind: 'refused', reason, message: expect.stringMatching(message) });
  });

  test('a missing or empty format means cloud-config', () => {
    expect(injectUserData({ value: PLAIN_CLOUD_CONFIG, format: undefined, network: network() }).kind).toBe('injected');
    expect(injectUserData({ value: PLAIN_CLOUD_CONFIG, format: '', network: network() }).kind).toBe('injected');
  });

  test('extractOriginal of a value never injected is the value', () => {
    expect(extractOriginal(CABPK_JOIN)).toBe(CABPK_JOIN);
    expect(extractOriginal(EXISTING_MULTIPART)).toBe(EXISTING_MULTIPART);
    expect(readInjectionHash(CABPK_JOIN)).toBeUndefined();
  });
});
