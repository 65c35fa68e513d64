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
    });
    expect(parseCliArgs(['--contract-spec', '/spec.yaml']).contractSpec).toBe('/spec.yaml');
  });

  test.each([
    [['--port', 'eighty'], 'must be a non-negative integer'],
    [['--tls-cert', 'c.pem'], 'go together'],
    [['--bogus'], 'bogus'],
  ])('refuses %j', (argv, message) => {
    expect(() => parseCliArgs(argv)).toThrow(CliError);
    expect(() => parseCliArgs(argv)).toThrow(message);
  });
});
