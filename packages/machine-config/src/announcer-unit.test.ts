import { describe, expect, test } from '@jest/globals';
import { announcerImageIssue, renderEndpointUnit } from './announcer-unit.js';
import { injectUserData } from './inject.js';
import { controlPlaneAnnouncer, renderedNetwork, hybridBonded } from '../test/fixtures/networks.js';

const IMAGE = 'ghcr.io/metal-l2/metal-l2:0.1.0';
const ORDER = { after: 'metal-l2.service', before: 'kubeadm.service' };

/** The unit's `Key=value` lines in a section, in order. */
function section(unit: string, name: string): [string, string][] {
  const lines = unit.split(`[${name}]\n`)[1]?.split('\n[')[0]?.split('\n') ?? [];
  return lines.filter((l) => l.includes('=')).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]);
}

describe('the announcer unit (Ignition control planes)', () => {
  const unit = renderEndpointUnit(IMAGE, ORDER);

  test('after the boot script and containerd, before kubeadm (which requires it); restarted without end', () => {
    expect(section(unit, 'Unit')).toEqual([
      ['Description', "metal-l2: this control plane's endpoint announcer (keepalived, VRRP) from the metal-l2 image"],
      ['Wants', 'network-online.target'],
      ['Requires', 'containerd.service metal-l2.service'],
      ['After', 'network-online.target containerd.service metal-l2.service'],
      ['Before', 'kubeadm.service'],
      ['ConditionPathExists', '/etc/keepalived/keepalived.conf'],
      ['StartLimitIntervalSec', '0'],
    ]);
    expect(section(unit, 'Install')).toEqual([
      ['WantedBy', 'multi-user.target'],
      ['RequiredBy', 'kubeadm.service'],
    ]);
  });

  test('pulls the image and runs keepalived in the host network namespace, as root, with NET_ADMIN and NET_RAW and the two directories', () => {
    const service = section(unit, 'Service');
    expect(service.filter(([k]) => k === 'Restart' || k === 'RestartSec')).toEqual([
      ['Restart', 'always'],
      ['RestartSec', '5'],
    ]);
    expect(service.filter(([k]) => k === 'ExecStartPre').map(([, v]) => v)).toEqual([
      '/usr/bin/mkdir -p /run/metal-l2',
      `/usr/bin/ctr --namespace metal-l2 image pull ${IMAGE}`,
      '-/usr/bin/ctr --namespace metal-l2 task rm --force metal-l2-endpoint',
      '-/usr/bin/ctr --namespace metal-l2 container rm metal-l2-endpoint',
    ]);
    const start = service.find(([k]) => k === 'ExecStart')?.[1].split(' ') ?? [];
    expect(start).toEqual([
      '/usr/bin/ctr',
      '--namespace',
      'metal-l2',
      'run',
      '--rm',
      '--net-host',
      '--user',
      '0:0',
      '--cap-add',
      'CAP_NET_ADMIN',
      '--cap-add',
      'CAP_NET_RAW',
      '--mount',
      'type=bind,src=/etc/keepalived/keepalived.conf,dst=/etc/keepalived/keepalived.conf,options=rbind:ro',
      '--mount',
      'type=bind,src=/etc/keepalived/metal-l2-apiserver-check,dst=/etc/keepalived/metal-l2-apiserver-check,options=rbind:ro',
      '--mount',
      'type=bind,src=/etc/keepalived/metal-l2-notify,dst=/etc/keepalived/metal-l2-notify,options=rbind:ro',
      '--mount',
      'type=bind,src=/run/metal-l2,dst=/run/metal-l2,options=rbind:rw',
      IMAGE,
      'metal-l2-endpoint',
      '/usr/sbin/keepalived',
      '--dont-fork',
      '--log-console',
      '--vrrp',
      '--use-file=/etc/keepalived/keepalived.conf',
    ]);
    expect(unit).not.toContain('%');
  });

  test.each([
    'ghcr.io/metal-l2/metal-l2:0.1.0',
    'registry.example.com:5000/team/metal-l2:v1.2.3-rc.1',
    'localhost/metal-l2:dev',
    `quay.io/a/b@sha256:${'0'.repeat(64)}`,
    `docker.io/library/metal-l2:1@sha256:${'a'.repeat(64)}`,
  ])('image %s is accepted', (image) => {
    expect(announcerImageIssue(image)).toBeUndefined();
    expect(renderEndpointUnit(image, ORDER)).toContain(` ${image} metal-l2-endpoint `);
  });

  test.each([
    { image: 'metal-l2:0.1.0', says: 'does not name its registry' },
    { image: 'metal-l2/metal-l2:0.1.0', says: 'write e.g. docker.io/metal-l2/metal-l2:0.1.0' },
    { image: 'ghcr.io/metal-l2/metal-l2', says: 'has no tag or digest' },
    { image: 'ghcr.io/metal-l2/metal-l2:0.1 --privileged', says: 'is not an image reference' },
    { image: 'ghcr.io/metal-l2/Metal-L2:1', says: 'is not an image reference' },
    { image: 'ghcr.io/metal-l2/metal-l2:%H', says: 'is not an image reference' },
    { image: '', says: 'is not an image reference' },
  ])('image "$image" is refused: $says', ({ image, says }) => {
    expect(announcerImageIssue(image)).toContain(says);
    expect(() => renderEndpointUnit(image, ORDER)).toThrow(says);
  });

  test('cloud-config control planes do not use the image: their bytes are the same with or without it', () => {
    const input = {
      value: '#cloud-config\n',
      format: 'cloud-config',
      network: renderedNetwork(hybridBonded),
      announcer: controlPlaneAnnouncer(),
    };
    expect(injectUserData({ ...input, announcerImage: IMAGE })).toEqual(injectUserData(input));
  });
});
