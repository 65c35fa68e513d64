import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as k8s from '@kubernetes/client-node';
import type { OwnedControlPlane } from '@metal-l2/local-control-plane';
import { loadKubeConfig } from '@metal-l2/test-support/cluster';
import { installCrds, upstreamCrds } from '@metal-l2/test-support/crds';
import { startPrivateControlPlane, stopPrivateControlPlane } from '@metal-l2/test-support/test-control-planes';

// CAPP-era management clusters run CAPI v1.7, which serves IPAM v1beta1 and no v1beta2. The shared
// control plane holds the v1.14 CRDs, so this file starts a private one for the older set.
describe('a control plane with the CAPI v1.7.9 CRDs', () => {
  let plane: OwnedControlPlane | undefined;
  let kc: k8s.KubeConfig;

  beforeAll(async () => {
    plane = await startPrivateControlPlane('capi-v1-7');
    kc = loadKubeConfig(plane.state.kubeconfig);
    await installCrds(kc, await upstreamCrds('capiV1_7'));
  });
  afterAll(async () => {
    await stopPrivateControlPlane(plane);
  });

  test('serves IPAM v1beta1 and not v1beta2', async () => {
    const apis = await kc.makeApiClient(k8s.ApisApi).getAPIVersions();
    const ipam = apis.groups.find((g) => g.name === 'ipam.cluster.x-k8s.io');
    expect(ipam?.versions.map((v) => v.version).sort()).toEqual(['v1alpha1', 'v1beta1']);
  });
});
