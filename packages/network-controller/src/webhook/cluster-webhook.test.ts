import { describe, expect, test } from '@jest/globals';
import { decideClusterHold } from './cluster-webhook.js';

const now = new Date('2026-12-02T07:00:00.123Z');
const linked = { 'network.metal.x-k8s.io/endpoint-template': 'vip' };

describe('decideClusterHold', () => {
  test('a linked Cluster without an endpoint is paused, with our marker', () => {
    const decision = decideClusterHold({ metadata: { name: 'a', annotations: linked }, spec: {} }, now);
    expect(decision).toEqual({
      kind: 'hold',
      templateName: 'vip',
      patch: [
        { op: 'add', path: '/spec/paused', value: true },
        { op: 'add', path: '/metadata/annotations/network.metal.x-k8s.io~1endpoint-hold', value: '2026-12-02T07:00:00Z' },
      ],
    });
  });

  test('a Cluster with no spec at all gets one', () => {
    const decision = decideClusterHold({ metadata: { name: 'a', annotations: linked } }, now);
    expect(decision.kind === 'hold' && decision.patch[0]).toEqual({ op: 'add', path: '/spec', value: { paused: true } });
  });

  test('a Cluster created with an endpoint (clusterctl move) passes', () => {
    expect(
      decideClusterHold({ metadata: { annotations: linked }, spec: { controlPlaneEndpoint: { host: '10.0.0.5', port: 6443 } } }, now),
    ).toEqual({
      kind: 'pass',
      why: 'endpoint-set',
    });
  });

  test('unlinked or empty link passes', () => {
    expect(decideClusterHold({ metadata: {}, spec: {} }, now)).toEqual({ kind: 'pass', why: 'unlinked' });
    expect(decideClusterHold({ metadata: { annotations: { 'network.metal.x-k8s.io/endpoint-template': '' } } }, now)).toEqual({
      kind: 'pass',
      why: 'unlinked',
    });
  });

  test('a pause of someone else gets no marker of ours; one with our marker passes as it is', () => {
    expect(decideClusterHold({ metadata: { annotations: linked }, spec: { paused: true } }, now)).toEqual({
      kind: 'paused-by-someone-else',
      templateName: 'vip',
    });
    expect(
      decideClusterHold(
        { metadata: { annotations: { ...linked, 'network.metal.x-k8s.io/endpoint-hold': 'x' } }, spec: { paused: true } },
        now,
      ),
    ).toEqual({ kind: 'pass', why: 'held-already' });
  });
});
