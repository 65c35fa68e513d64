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
      driftCheckIntervalSeconds: 600,
      bootScriptTimeoutSeconds: 900,
      metadataUrl: 'https://metadata.platformequinix.com/metadata',
    });
  });

  test('the default credentials Secret is namespace/name', () => {
    expect(parseFlags(['--metal-credentials-secret', 'metal-l2-system/metal'])).toMatchObject({
      metalCredentialsSecret: { namespace: 'metal-l2-system', name: 'metal' },
    });
    expect(() => parseFlags(['--metal-credentials-secret', 'metal'])).toThrow('--metal-credentials-secret takes namespace/name');
  });

  test.each([
    ['--hold-timeout-seconds', '0', '--hold-timeout-seconds takes an integer >= 1'],
    ['--drift-check-interval-seconds', '5', '--drift-check-interval-seconds takes an integer >= 10'],
    ['--boot-script-timeout-seconds', '0', '--boot-script-timeout-seconds takes an integer >= 1'],
    ['--metadata-url', 'ftp://x', '--metadata-url takes an http(s) URL'],
  ])('%s %s is refused', (flag, value, message) => {
    expect(() => parseFlags([flag, value])).toThrow(message);
  });
});
