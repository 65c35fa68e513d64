import { describe, expect, test } from '@jest/globals';
import { parseFlags } from './options.js';

describe('parseFlags', () => {
  test('defaults', () => {
    const flags = parseFlags([]);
    expect(flags).toMatchObject({
      leaderElect: true,
      leaderElectionId: 'metal-l2-network-controller',
      webhookPort: 9443,
      holdTimeoutSeconds: 300,
      unassignGiveUpSeconds: 600,
      metadataUrl: 'https://metadata.platformequinix.com/metadata',
    });
  });

  test('the default credentials Secret is namespace/name', () => {
    expect(parseFlags(['--metal-credentials-secret', 'metal-l2-system/metal'])).toMatchObject({
      metalCredentialsSecret: { namespace: 'metal-l2-system', name: 'metal' },
    });
    expect(() => parseFlags(['--metal-credentials-secret', 'metal'])).toThrow('--metal-credentials-secret takes namespace/name');
  });

  test('--unassign-give-up-seconds sets how long deletion retries checking VLANs it cannot check; 0 goes on at once', () => {
    expect(parseFlags(['--unassign-give-up-seconds', '120'])).toMatchObject({ unassignGiveUpSeconds: 120 });
    expect(parseFlags(['--unassign-give-up-seconds=0'])).toMatchObject({ unassignGiveUpSeconds: 0 });
  });

  test('a negative --unassign-give-up-seconds is refused', () => {
    expect(() => parseFlags(['--unassign-give-up-seconds=-1'])).toThrow('--unassign-give-up-seconds takes an integer >= 0, not "-1"');
  });

  test.each([
    ['--unassign-give-up-seconds', '1.5', '--unassign-give-up-seconds takes an integer >= 0'],
    ['--hold-timeout-seconds', '0', '--hold-timeout-seconds takes an integer >= 1'],
    ['--metadata-url', 'ftp://x', '--metadata-url takes an http(s) URL'],
  ])('%s %s is refused', (flag, value, message) => {
    expect(() => parseFlags([flag, value])).toThrow(message);
  });
});
