import { describe, expect, test } from '@jest/globals';
import { CliError, parseCliArgs } from './cli-args.js';

describe('parseCliArgs', () => {
  test('defaults', () => {
    expect(parseCliArgs([])).toEqual({
      port: 8080,
      host: '127.0.0.1',
      seedFile: undefined,
      seed: undefined,
      faults: undefined,
      tlsCert: undefined,
      tlsKey: undefined,
      publicUrl: undefined,
      contractSpec: undefined,
      delays: {},
      rateLimit: undefined,
      help: false,
    });
  });

  test('every flag', () => {
    const opts = parseCliArgs([
      '--port',
      '0',
      '--host',
      '0.0.0.0',
      '--seed-file',
      's.yaml',
      '--seed',
      '42',
      '--faults',
      '[{"fault":"drop"}]',
      '--tls-cert',
      'c.pem',
      '--tls-key',
      'k.pem',
      '--public-url',
      'https://x',
      '--validate-contract',
      '--batch-in-progress-ms',
      '5',
      '--device-deprovisioning-ms',
      '0',
      '--rate-limit',
      '2.5:8',
    ]);
    expect(opts).toMatchObject({
      port: 0,
      host: '0.0.0.0',
      seedFile: 's.yaml',
      seed: '42',
      faults: '[{"fault":"drop"}]',
      tlsCert: 'c.pem',
      tlsKey: 'k.pem',
      publicUrl: 'https://x',
      contractSpec: '',
      delays: { batchInProgressMs: 5, deviceDeprovisioningMs: 0 },
      rateLimit: { requestsPerSecond: 2.5, burst: 8 },
    });
    // The burst defaults to one second's worth of requests.
    expect(parseCliArgs(['--rate-limit', '5']).rateLimit).toEqual({ requestsPerSecond: 5, burst: 5 });
    expect(parseCliArgs(['--contract-spec', '/spec.yaml']).contractSpec).toBe('/spec.yaml');
  });

  test.each([
    [['--port', 'eighty'], 'must be a non-negative integer'],
    [['--tls-cert', 'c.pem'], 'go together'],
    [['--bogus'], 'bogus'],
    [['--rate-limit', 'fast'], '--rate-limit: a rate limit is <requests per second>[:<burst>]'],
    [['--rate-limit', '0:5'], "--rate-limit: the rate limit's requests per second must be a number above 0"],
    [['--rate-limit', '5:0'], "--rate-limit: the rate limit's burst must be a whole number from 1"],
  ])('refuses %j', (argv, message) => {
    expect(() => parseCliArgs(argv)).toThrow(CliError);
    expect(() => parseCliArgs(argv)).toThrow(message);
  });
});
