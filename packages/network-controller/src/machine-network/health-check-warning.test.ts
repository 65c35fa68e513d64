import { describe, expect, test } from '@jest/globals';
import type { Machine, MachineHealthCheck } from '@metal-l2/api';
import { nodeStartupTimeoutMs, parseGoDurationMs, selectsMachine, shortNodeStartupWarning } from './health-check-warning.js';

const machine: Machine = {
  metadata: { name: 'w-1', namespace: 'n', labels: { 'cluster.x-k8s.io/deployment-name': 'md-0', role: 'worker' } },
  spec: { clusterName: 'wl', bootstrap: {}, infrastructureRef: { kind: 'PacketMachine', name: 'w-1' } },
};
const mhc = (spec: Partial<MachineHealthCheck['spec']>): MachineHealthCheck => ({
  metadata: { name: 'md-0-mhc', namespace: 'n' },
  spec: { clusterName: 'wl', selector: { matchLabels: { 'cluster.x-k8s.io/deployment-name': 'md-0' } }, ...spec },
});

describe('parseGoDurationMs', () => {
  test.each([
    ['10m', 600_000],
    ['1h30m', 5_400_000],
    ['90s', 90_000],
    ['10m0s', 600_000],
    ['0', 0],
    ['ten minutes', undefined],
  ])('%s', (text, want) => expect(parseGoDurationMs(text)).toBe(want));
});

describe('nodeStartupTimeoutMs', () => {
  test('v1beta1 duration, v1beta2 seconds, default 10 minutes', () => {
    expect(nodeStartupTimeoutMs(mhc({ nodeStartupTimeout: '5m' }))).toBe(300_000);
    expect(nodeStartupTimeoutMs(mhc({ checks: { nodeStartupTimeoutSeconds: 120 } }))).toBe(120_000);
    expect(nodeStartupTimeoutMs(mhc({}))).toBe(600_000);
  });
});

describe('selectsMachine', () => {
  test.each<[string, Partial<MachineHealthCheck['spec']>, boolean]>([
    ['matching labels', {}, true],
    ['another cluster', { clusterName: 'other' }, false],
    ['a label that differs', { selector: { matchLabels: { role: 'control-plane' } } }, false],
    ['an In expression', { selector: { matchExpressions: [{ key: 'role', operator: 'In', values: ['worker'] }] } }, true],
    [
      'a DoesNotExist expression on a present label',
      { selector: { matchExpressions: [{ key: 'role', operator: 'DoesNotExist' }] } },
      false,
    ],
  ])('%s', (_name, spec, want) => expect(selectsMachine(mhc(spec), machine)).toBe(want));
});

describe('shortNodeStartupWarning', () => {
  test('warns when hold plus provisioning exceed the timeout of a selecting check', () => {
    const warning = shortNodeStartupWarning({
      machine,
      healthChecks: [mhc({ nodeStartupTimeout: '10m' })],
      holdTimeoutMs: 300_000,
      provisioningEstimateMs: 600_000,
    });
    expect(warning).toContain('md-0-mhc gives a new Machine 600 s');
  });

  test('no warning for a long enough timeout, a disabled one, or a check selecting other machines', () => {
    const input = { machine, holdTimeoutMs: 300_000, provisioningEstimateMs: 600_000 };
    expect(shortNodeStartupWarning({ ...input, healthChecks: [mhc({ nodeStartupTimeout: '20m' })] })).toBeUndefined();
    expect(shortNodeStartupWarning({ ...input, healthChecks: [mhc({ nodeStartupTimeout: '0' })] })).toBeUndefined();
    expect(shortNodeStartupWarning({ ...input, healthChecks: [mhc({ nodeStartupTimeout: '1m', clusterName: 'other' })] })).toBeUndefined();
  });
});
