import { parseArgs } from 'node:util';
import { describe, expect, test } from '@jest/globals';
import { normalizeBooleanFlags, readRuntimeFlags, runtimeFlagOptions } from './flags.js';

function parse(argv: string[]): ReturnType<typeof readRuntimeFlags> {
  const { values } = parseArgs({ args: normalizeBooleanFlags(argv), options: runtimeFlagOptions, allowNegative: true, strict: true });
  return readRuntimeFlags(values);
}

describe('runtime flags', () => {
  test('defaults: leader election on, controller-runtime ports, info logs', () => {
    expect(parse([])).toEqual({
      kubeconfig: undefined,
      namespace: undefined,
      leaderElect: true,
      leaderElectionNamespace: undefined,
      leaderElectionId: undefined,
      metricsBindAddress: ':8080',
      healthProbeBindAddress: ':8081',
      concurrency: 10,
      logLevel: 'info',
      logFormat: 'json',
      gracefulShutdownTimeoutSeconds: 30,
      reconcileTimeoutSeconds: undefined,
    });
  });

  test.each([
    ['--leader-elect=false', false],
    ['--leader-elect=true', true],
    ['--no-leader-elect', false],
    ['--leader-elect', true],
  ])('%s turns leader election %s', (flag, want) => {
    expect(parse([flag]).leaderElect).toBe(want);
  });

  test('values are read and checked', () => {
    const flags = parse([
      '--kubeconfig',
      '/tmp/kc',
      '--namespace=ns',
      '--concurrency=4',
      '--log-level=5',
      '--metrics-bind-address=0',
      '--health-probe-bind-address=127.0.0.1:9440',
      '--graceful-shutdown-timeout-seconds=20',
    ]);
    expect(flags).toMatchObject({
      kubeconfig: '/tmp/kc',
      namespace: 'ns',
      concurrency: 4,
      logLevel: 'debug',
      metricsBindAddress: '0',
      healthProbeBindAddress: '127.0.0.1:9440',
      gracefulShutdownTimeoutSeconds: 20,
      reconcileTimeoutSeconds: undefined,
    });
  });

  test.each([
    [['--concurrency=0'], '--concurrency must be a positive integer'],
    [['--log-format=xml'], '--log-format must be json or text'],
    [['--log-level=loud'], 'invalid log level'],
    [['--metrics-bind-address=8080'], 'invalid bind address'],
    [['--graceful-shutdown-timeout-seconds=0'], '--graceful-shutdown-timeout-seconds takes an integer >= 1'],
  ])('%p is refused', (argv, message) => {
    expect(() => parse(argv)).toThrow(message);
  });
});
