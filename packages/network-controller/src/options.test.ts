import { describe, expect, test } from '@jest/globals';
import { parseFlags } from './options.js';

describe('parseFlags', () => {
  test('the Metal client-side rate limit: 10 a second, burst 20, by default; R[:B] or off', () => {
    expect(parseFlags([])).toMatchObject({ metalRateLimit: { requestsPerSecond: 10, burst: 20 } });
    expect(parseFlags(['--metal-rate-limit', '2:5'])).toMatchObject({ metalRateLimit: { requestsPerSecond: 2, burst: 5 } });
    expect(parseFlags(['--metal-rate-limit=off'])).toMatchObject({ metalRateLimit: false });
    expect(() => parseFlags(['--metal-rate-limit', '10/s'])).toThrow('--metal-rate-limit: a rate limit is <requests per second>[:<burst>]');
  });

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

  test('--announcer-image: none by default (and when empty), a pullable reference, or refused at start with the reason', () => {
    expect(parseFlags([])).toMatchObject({ announcerImage: undefined });
    expect(parseFlags(['--announcer-image='])).toMatchObject({ announcerImage: undefined });
    expect(parseFlags(['--announcer-image', 'ghcr.io/metal-l2/metal-l2:0.1.0'])).toMatchObject({
      announcerImage: 'ghcr.io/metal-l2/metal-l2:0.1.0',
    });
    expect(() => parseFlags(['--announcer-image', 'metal-l2:0.1.0'])).toThrow(
      '--announcer-image: "metal-l2:0.1.0" does not name its registry',
    );
    expect(() => parseFlags(['--announcer-image', 'ghcr.io/metal-l2/metal-l2'])).toThrow('has no tag or digest');
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
