import { describe, expect, test } from '@jest/globals';
import { ownerTags, ownershipOf, type Owner } from './ownership.js';

const owner: Owner = { ref: { kind: 'InClusterIPPool', namespace: 'ns', name: 'vrf-pool' }, clusterIdentity: 'uid-a' };
const poolTag = 'ipam.metal.x-k8s.io/pool=InClusterIPPool/ns/vrf-pool';

describe('ownership of a Metal object, from its tags', () => {
  test('what a pool creates carries its pool tag and its management cluster tag', () => {
    expect(ownerTags(owner)).toEqual([poolTag, 'ipam.metal.x-k8s.io/management-cluster=uid-a']);
  });

  test.each([
    { name: 'this pool, this cluster', tags: ownerTags(owner), want: { kind: 'ours' } },
    {
      name: 'the same pool name in another management cluster',
      tags: [poolTag, 'ipam.metal.x-k8s.io/management-cluster=uid-b'],
      want: { kind: 'otherCluster', clusterIdentity: 'uid-b' },
    },
    {
      name: 'another pool of another management cluster',
      tags: ['ipam.metal.x-k8s.io/pool=InClusterIPPool/ns/other', 'ipam.metal.x-k8s.io/management-cluster=uid-b'],
      want: { kind: 'otherCluster', clusterIdentity: 'uid-b' },
    },
    { name: 'this pool name without a cluster tag (metal-l2 before cluster tags)', tags: [poolTag], want: { kind: 'legacy' } },
    {
      name: 'another pool of this cluster',
      tags: ['ipam.metal.x-k8s.io/pool=InClusterIPPool/ns/other', 'ipam.metal.x-k8s.io/management-cluster=uid-a'],
      want: { kind: 'none' },
    },
    { name: 'no tags', tags: undefined, want: { kind: 'none' } },
    { name: 'tags of people', tags: ['env=prod'], want: { kind: 'none' } },
  ])('$name', ({ tags, want }) => {
    expect(ownershipOf(tags, owner)).toEqual(want);
  });
});
