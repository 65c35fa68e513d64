import { describe, expect, test } from '@jest/globals';
import { allCrds } from './all-crds.js';

describe('our CRDs, as clusterctl move discovers them', () => {
  // clusterctl v1.7.9 (cmd/clusterctl/client/cluster/objectgraph.go) lists only the CRDs that have
  // the label clusterctl.cluster.x-k8s.io, and moves every object of a move-hierarchy kind.
  test('every CRD carries the discovery label and move-hierarchy, so a Helm install moves too', () => {
    const crds = allCrds().map((c) => c['metadata'] as { name: string; labels?: Record<string, string> });
    expect(crds.length).toBeGreaterThanOrEqual(7);
    for (const crd of crds) {
      expect({ crd: crd.name, labels: crd.labels }).toEqual({
        crd: crd.name,
        labels: expect.objectContaining({
          'clusterctl.cluster.x-k8s.io': '',
          'clusterctl.cluster.x-k8s.io/move-hierarchy': '',
          'cluster.x-k8s.io/provider': 'ipam-metal-l2',
        }),
      });
    }
  });
});
