import { describe, expect, test } from '@jest/globals';
import { credentialsSecretKey } from './credentials.js';

describe('credentialsSecretKey', () => {
  test.each([
    {
      name: 'a namespaced pool reads its own namespace',
      ref: { kind: 'InClusterIPPool' as const, namespace: 'team-a', name: 'p' },
      secret: { name: 'metal' },
      controller: 'metal-system',
      want: { kind: 'ok', key: { namespace: 'team-a', name: 'metal' } },
    },
    {
      name: 'a namespaced pool may name its own namespace',
      ref: { kind: 'InClusterIPPool' as const, namespace: 'team-a', name: 'p' },
      secret: { name: 'metal', namespace: 'team-a' },
      controller: undefined,
      want: { kind: 'ok', key: { namespace: 'team-a', name: 'metal' } },
    },
    {
      name: 'a namespaced pool may not name another namespace',
      ref: { kind: 'InClusterIPPool' as const, namespace: 'team-a', name: 'p' },
      secret: { name: 'metal', namespace: 'metal-system' },
      controller: 'metal-system',
      want: { kind: 'invalid', message: "must be the pool's own namespace team-a (or left out), not metal-system" },
    },
    {
      name: 'a global pool defaults to the controller namespace',
      ref: { kind: 'GlobalInClusterIPPool' as const, name: 'g' },
      secret: { name: 'metal' },
      controller: 'metal-system',
      want: { kind: 'ok', key: { namespace: 'metal-system', name: 'metal' } },
    },
    {
      name: 'a global pool may name any namespace',
      ref: { kind: 'GlobalInClusterIPPool' as const, name: 'g' },
      secret: { name: 'metal', namespace: 'infra' },
      controller: undefined,
      want: { kind: 'ok', key: { namespace: 'infra', name: 'metal' } },
    },
    {
      name: 'a global pool without either cannot be placed',
      ref: { kind: 'GlobalInClusterIPPool' as const, name: 'g' },
      secret: { name: 'metal' },
      controller: undefined,
      want: { kind: 'invalid', message: 'must be set: the controller was started without --controller-namespace (or POD_NAMESPACE)' },
    },
  ])('$name', ({ ref, secret, controller, want }) => {
    expect(credentialsSecretKey(ref, { credentialsSecretRef: secret }, controller)).toEqual(want);
  });
});
