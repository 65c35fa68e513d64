import { describe, expect, test } from '@jest/globals';
import { parseFlags } from './cli-flags.js';

describe('parseFlags', () => {
  test('reads every flag', () => {
    expect(
      parseFlags(
        [
          '--kubeconfig',
          'kc',
          '--metal-api-url',
          'http://127.0.0.1:8080/metal/v1',
          '--metal-token-file',
          'tok',
          '--namespace',
          'ns',
          '--capi-version',
          'v1beta1',
          '--no-machine-controller',
          '--poll-interval-ms',
          '500',
        ],
        {},
      ),
    ).toEqual({
      kubeconfig: 'kc',
      metalApiUrl: 'http://127.0.0.1:8080/metal/v1',
      token: { kind: 'file', path: 'tok' },
      namespace: 'ns',
      capiVersion: 'v1beta1',
      playMachineController: false,
      pollIntervalMs: 500,
      logLevel: 'info',
      logFormat: 'text',
    });
  });

  test('takes the token from METAL_TOKEN when no file is given', () => {
    expect(parseFlags(['--metal-api-url', 'http://sim/metal/v1'], { METAL_TOKEN: ' t0k\n' })).toMatchObject({
      token: { kind: 'value', value: 't0k' },
      playMachineController: true,
    });
  });

  test.each([
    { name: 'no Metal URL', argv: [], env: { METAL_TOKEN: 't' }, message: /--metal-api-url is required/ },
    { name: 'no token', argv: ['--metal-api-url', 'http://sim'], env: {}, message: /METAL_TOKEN/ },
    {
      name: 'an unknown CAPI version',
      argv: ['--metal-api-url', 'http://sim', '--capi-version', 'v1'],
      env: { METAL_TOKEN: 't' },
      message: /--capi-version/,
    },
    {
      name: 'a bad poll interval',
      argv: ['--metal-api-url', 'http://sim', '--poll-interval-ms', '0'],
      env: { METAL_TOKEN: 't' },
      message: /--poll-interval-ms/,
    },
  ])('refuses $name', ({ argv, env, message }) => {
    expect(() => parseFlags(argv, env)).toThrow(message);
  });
});
