// The real cloud-init (Debian 12's package, unpacked by test/support/fetch-cloud-init.sh) judges the
// injected user data: MIME parsing, Jinja rendering of CABPK's part, merge_how, script ordering. And
// CAPP's Go templating (hack/go-template) runs over the whole value first, as it does before a
// device is created.
import { afterAll, describe, expect, test } from '@jest/globals';
import { renderGoTemplate } from '@metal-l2/test-support/go-template';
import { parseEnvelope } from '../src/envelope.js';
import { ANNOUNCER_COMMANDS, extractOriginal, injectUserData } from '../src/index.js';
import type { InjectOutcome, RenderedAnnouncer, RenderedNetwork } from '../src/index.js';
import { CABPK_JOIN, CAPP_JOIN, EXISTING_MULTIPART, PLAIN_CLOUD_CONFIG, SHELL_SCRIPT } from './fixtures/bootstrap.js';
import { hybridBonded, hybridNative, controlPlaneAnnouncer, renderedNetwork } from './fixtures/networks.js';
import { processUserData } from './support/cloud-init.js';
import type { CloudInitResult } from './support/cloud-init.js';

const INSTANCE = { instanceId: '4f1b7c0e-1d2a-4e0f-9a51-7b7c2a9d6e01', localHostname: 'worker-a' };
const OUR_COMMAND = '/opt/metal-l2/metal-l2-net apply || exit 1';
const OUR_PATHS = ['/opt/metal-l2/files/01-60-metal-l2.cfg', '/opt/metal-l2/netcfg.json', '/opt/metal-l2/metal-l2-net'];
const JOIN = 'kubeadm join --config /run/kubeadm/kubeadm-join-config.yaml  && echo success > /run/cluster-api/bootstrap-success.complete';

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  await Promise.all(cleanups.map((c) => c()));
});

async function cloudInit(userData: string): Promise<CloudInitResult> {
  const result = await processUserData(userData, INSTANCE);
  cleanups.push(result.cleanup);
  return result;
}

function network(ports = hybridBonded): RenderedNetwork {
  return renderedNetwork(ports);
}

/** A control plane's announcer for the hybrid-bonded fixture: the VIP on bond0's VLAN 1000. */
function announcer(): RenderedAnnouncer {
  return controlPlaneAnnouncer();
}

function injectedValue(out: InjectOutcome): string {
  if (out.kind !== 'injected') throw new Error(`expected injected, got ${JSON.stringify(out)}`);
  return out.value;
}

interface WriteFile {
  path: string;
  content?: string;
  encoding?: string;
}

function writeFiles(result: CloudInitResult): WriteFile[] {
  return (result.cloud_config?.['write_files'] ?? []) as WriteFile[];
}

function withoutOurs(result: CloudInitResult): Record<string, unknown> | null {
  const cc = result.cloud_config;
  if (cc === null) return null;
  const runcmd = (cc['runcmd'] as unknown[]).filter((c) => c !== OUR_COMMAND);
  const files = writeFiles(result).filter((f) => !OUR_PATHS.includes(f.path));
  const rest: Record<string, unknown> = { ...cc, runcmd };
  if (files.length > 0) rest['write_files'] = files;
  else delete rest['write_files'];
  return rest;
}

describe('cloud-init 22.4 (Debian 12) on injected user data', () => {
  test('CABPK join data: our step runs first, kubeadm join and every original file kept, Jinja rendered', async () => {
    const value = injectedValue(injectUserData({ value: CABPK_JOIN, format: 'cloud-config', network: network() }));
    const [injected, alone] = await Promise.all([cloudInit(value), cloudInit(CABPK_JOIN)]);
    expect(injected.warnings).toEqual([]);
    expect(injected.cloud_config?.['runcmd']).toEqual([OUR_COMMAND, 'apt-get install -y kubelet', JOIN]);
    expect(writeFiles(injected).map((f) => f.path)).toEqual([
      ...OUR_PATHS,
      '/run/kubeadm/kubeadm-join-config.yaml',
      '/run/cluster-api/placeholder',
    ]);
    const join = writeFiles(injected).find((f) => f.path === '/run/kubeadm/kubeadm-join-config.yaml');
    expect(join?.content).toContain(`provider-id: equinixmetal://${INSTANCE.instanceId}\n`);
    expect(join?.content).toContain(`name: '${INSTANCE.localHostname}'`);
    // Everything else is exactly what cloud-init makes of the original alone.
    expect(withoutOurs(injected)).toEqual(alone.cloud_config);
    expect(injected.cloud_config).not.toHaveProperty('merge_how');
  });

  test('our files arrive intact: base64 decodes to the rendered config, the boot config and the script', async () => {
    const net = network(hybridNative);
    const value = injectedValue(injectUserData({ value: CABPK_JOIN, format: 'cloud-config', network: net }));
    const result = await cloudInit(value);
    const ours = writeFiles(result).filter((f) => OUR_PATHS.includes(f.path));
    expect(ours.map((f) => f.encoding)).toEqual(['b64', 'b64', 'b64']);
    const decoded = ours.map((f) => Buffer.from(f.content ?? '', 'base64').toString('utf8'));
    expect(decoded[0]).toBe(net.files[0]?.content);
    expect(JSON.parse(decoded[1] ?? '')).toMatchObject({
      renderer: 'ifupdown',
      ports: [{ name: 'bond0' }, { name: 'eth1', detach: true }],
    });
    expect(decoded[2]).toMatch(/^#!\/bin\/sh\n/);
  });

  test.each([
    { name: 'plain #cloud-config', original: PLAIN_CLOUD_CONFIG, runcmd: [OUR_COMMAND, 'echo plain'], scripts: [] as string[] },
    {
      name: 'existing MIME multipart: its cloud-config merged after ours, its script kept',
      original: EXISTING_MULTIPART,
      runcmd: [OUR_COMMAND, 'echo from-multipart'],
      scripts: ['zz-script.sh'],
    },
    {
      name: '#! script: saved as a script named after runcmd, so it runs after our step',
      original: SHELL_SCRIPT,
      runcmd: [OUR_COMMAND],
      scripts: ['user-data'],
    },
  ])('$name', async ({ original, runcmd, scripts }) => {
    const value = injectedValue(injectUserData({ value: original, format: 'cloud-config', network: network() }));
    const result = await cloudInit(value);
    expect(result.warnings).toEqual([]);
    expect(result.cloud_config?.['runcmd']).toEqual(runcmd);
    expect(
      writeFiles(result)
        .slice(0, 3)
        .map((f) => f.path),
    ).toEqual(OUR_PATHS);
    expect(result.scripts).toEqual(scripts);
    // scripts_user runs the scripts directory in name order; cc_runcmd writes ours as "runcmd".
    for (const s of scripts) expect('runcmd' < s).toBe(true);
  });

  test('re-wrapped after a network change: cloud-init sees one envelope and the new network only', async () => {
    const first = injectedValue(injectUserData({ value: CABPK_JOIN, format: 'cloud-config', network: network(hybridBonded) }));
    const second = injectedValue(injectUserData({ value: first, format: 'cloud-config', network: network(hybridNative) }));
    const result = await cloudInit(second);
    expect(result.cloud_config?.['runcmd']).toEqual([OUR_COMMAND, 'apt-get install -y kubelet', JOIN]);
    const rendered = writeFiles(result).find((f) => f.path === OUR_PATHS[0]);
    expect(Buffer.from(rendered?.content ?? '', 'base64').toString('utf8')).toBe(network(hybridNative).files[0]?.content);
  });
});

describe('CAPP Go templating, then cloud-init', () => {
  const data = { kubernetesVersion: 'v1.29.4' };

  test('the injected value parses and executes; part 1 renders as the original alone; our part is untouched', async () => {
    const value = injectedValue(injectUserData({ value: CAPP_JOIN, format: 'cloud-config', network: network() }));
    const [templated, originalAlone] = await Promise.all([renderGoTemplate(value, data), renderGoTemplate(CAPP_JOIN, data)]);
    expect(extractOriginal(templated)).toBe(originalAlone);
    const before = parseEnvelope(value);
    const after = parseEnvelope(templated);
    if (before.kind !== 'envelope' || after.kind !== 'envelope') throw new Error('envelope lost');
    expect(after.part).toBe(before.part);
    expect(templated).not.toContain('<no value>');

    const result = await cloudInit(templated);
    expect(result.warnings).toEqual([]);
    const runcmd = result.cloud_config?.['runcmd'] as string[];
    expect(runcmd[0]).toBe(OUR_COMMAND);
    expect(runcmd).toContain('MINOR_KUBERNETES_VERSION=$(echo v1.29.4 | cut -d. -f1-2) && echo $MINOR_KUBERNETES_VERSION > /run/minor');
    expect(runcmd.indexOf(OUR_COMMAND)).toBeLessThan(runcmd.indexOf(JOIN));
    const files = writeFiles(result);
    expect(files.find((f) => f.path === '/run/kubeadm/kubeadm-join-config.yaml')?.content).toContain(
      `provider-id: equinixmetal://${INSTANCE.instanceId}\n`,
    );
    expect(files.find((f) => f.path === '/etc/metal-l2-test/version')?.content).toBe('v1.29.4');
  });

  test('a control plane with the endpoint announcer: templating leaves our part alone; its files and commands come after the network step, before the join', async () => {
    const value = injectedValue(injectUserData({ value: CAPP_JOIN, format: 'cloud-config', network: network(), announcer: announcer() }));
    const templated = await renderGoTemplate(value, data);
    const before = parseEnvelope(value);
    const after = parseEnvelope(templated);
    if (before.kind !== 'envelope' || after.kind !== 'envelope') throw new Error('envelope lost');
    expect(after.part).toBe(before.part);

    const result = await cloudInit(templated);
    expect(result.warnings).toEqual([]);
    const runcmd = result.cloud_config?.['runcmd'] as string[];
    expect(runcmd.slice(0, 3)).toEqual([OUR_COMMAND, ...ANNOUNCER_COMMANDS]);
    expect(runcmd.indexOf(ANNOUNCER_COMMANDS[1] ?? '')).toBeLessThan(runcmd.indexOf(JOIN));
    const paths = writeFiles(result).map((f) => f.path);
    expect(paths.slice(0, 6)).toEqual([
      '/opt/metal-l2/files/01-60-metal-l2.cfg',
      '/opt/metal-l2/files/02-keepalived.conf',
      '/opt/metal-l2/files/03-metal-l2-apiserver-check',
      '/opt/metal-l2/files/04-metal-l2-notify',
      '/opt/metal-l2/netcfg.json',
      '/opt/metal-l2/metal-l2-net',
    ]);
    const conf = writeFiles(result).find((f) => f.path === '/opt/metal-l2/files/02-keepalived.conf');
    expect(Buffer.from(conf?.content ?? '', 'base64').toString('utf8')).toBe(announcer().files[0]?.content);
    const notify = writeFiles(result).find((f) => f.path === '/opt/metal-l2/files/04-metal-l2-notify');
    expect(Buffer.from(notify?.content ?? '', 'base64').toString('utf8')).toBe(announcer().files[2]?.content);
  });

  test('a Go template error in the original still surfaces (we neither hide nor cause it)', async () => {
    const broken = `${PLAIN_CLOUD_CONFIG}# {{ .unclosed\n`;
    const value = injectedValue(injectUserData({ value: broken, format: 'cloud-config', network: network() }));
    await expect(renderGoTemplate(value, data)).rejects.toThrow(/error parsing userdata template/);
    await expect(
      renderGoTemplate(injectedValue(injectUserData({ value: PLAIN_CLOUD_CONFIG, format: 'cloud-config', network: network() })), data),
    ).resolves.toContain('#cloud-config');
  });
});
