import { describe, expect, test } from '@jest/globals';
import { parseFlags } from './options.js';

describe('VRF flags', () => {
  test('the Metal client-side rate limit: 10 a second, burst 20, by default; R[:B] or off', () => {
    expect(parseFlags([])).toMatchObject({ metalRateLimit: { requestsPerSecond: 10, burst: 20 } });
    expect(parseFlags(['--metal-rate-limit', '2:5'])).toMatchObject({ metalRateLimit: { requestsPerSecond: 2, burst: 5 } });
    expect(parseFlags(['--metal-rate-limit=off'])).toMatchObject({ metalRateLimit: false });
    expect(() => parseFlags(['--metal-rate-limit', '10/s'])).toThrow('--metal-rate-limit: a rate limit is <requests per second>[:<burst>]');
  });

  test('default to the real Metal API, no controller namespace (main falls back to the pod’s) and a 5 min resync', () => {
    expect(parseFlags([])).toMatchObject({
      metalApiUrl: 'https://api.equinix.com/metal/v1',
      controllerNamespace: undefined,
      vrfResyncSeconds: 300,
      poolStatusBudgetBytes: 1_310_720,
      blockSize: 1_024,
    });
  });

  test('take a small block size (tests cross several blocks with a few claims)', () => {
    expect(parseFlags(['--block-size', '16'])).toMatchObject({ blockSize: 16 });
  });

  test('take an explicit cluster identity; none by default (main reads the kube-system Namespace UID)', () => {
    expect(parseFlags([]).valueOf()).toMatchObject({ clusterIdentity: undefined });
    expect(parseFlags(['--cluster-identity', 'mgmt-eu.1'])).toMatchObject({ clusterIdentity: 'mgmt-eu.1' });
  });

  test('take a simulator URL, a namespace and a resync period', () => {
    expect(
      parseFlags([
        '--metal-api-url',
        'http://127.0.0.1:8080/metal/v1',
        '--controller-namespace',
        'metal-system',
        '--vrf-resync-seconds',
        '30',
      ]),
    ).toMatchObject({
      metalApiUrl: 'http://127.0.0.1:8080/metal/v1',
      controllerNamespace: 'metal-system',
      vrfResyncSeconds: 30,
    });
  });

  test.each([
    { name: 'a URL without a scheme', args: ['--metal-api-url', 'api.equinix.com'], want: '--metal-api-url takes an http(s) URL' },
    { name: 'another scheme', args: ['--metal-api-url', 'ftp://metal'], want: '--metal-api-url takes an http(s) URL' },
    { name: 'a zero resync', args: ['--vrf-resync-seconds', '0'], want: '--vrf-resync-seconds takes an integer >= 1' },
    { name: 'a cluster identity with a slash', args: ['--cluster-identity', 'a/b'], want: '--cluster-identity: "a/b" is not a valid' },
    { name: 'an empty cluster identity', args: ['--cluster-identity='], want: '--cluster-identity: "" is not a valid' },
    {
      name: 'a tiny status budget',
      args: ['--pool-status-budget-bytes', '1000'],
      want: '--pool-status-budget-bytes takes an integer >= 16384',
    },
    {
      name: 'a status budget past etcd’s limit',
      args: ['--pool-status-budget-bytes', '2000000'],
      want: '--pool-status-budget-bytes must stay below etcd’s 1.5 MiB request limit',
    },
    { name: 'a block size that is not a power of two', args: ['--block-size', '1000'], want: '--block-size must be a power of two' },
    {
      name: 'a block size whose full block cannot fit the budget',
      args: ['--block-size', '256', '--pool-status-budget-bytes', '65536'],
      want: '--block-size 256 is too large: a full block of the longest entries must fit --pool-status-budget-bytes 65536 (at most 128 addresses)',
    },
    { name: 'a block size past the largest', args: ['--block-size', '4096'], want: '(at most 2048 addresses)' },
  ])('refuse $name', ({ args, want }) => {
    expect(() => parseFlags(args)).toThrow(want);
  });
});
