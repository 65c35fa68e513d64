import { afterAll, beforeAll } from '@jest/globals';
import type * as k8s from '@kubernetes/client-node';
import { createTestNamespace, deleteTestNamespace, loadKubeConfig } from '@metal-l2/test-support/cluster';
import { installCrds, projectCrds, upstreamCrds } from '@metal-l2/test-support/crds';
import { Objects } from '@metal-l2/test-support/objects';
import type { ClaimSite } from './claims.js';

export interface IpamNamespace {
  readonly kc: k8s.KubeConfig;
  readonly objects: Objects;
  /** This file's namespace; set once beforeAll ran. */
  readonly ns: string;
  readonly site: ClaimSite;
}

/**
 * The shared test control plane with the CAPI v1.14 and metal-l2 CRDs installed, and a fresh
 * namespace for the calling test file, deleted after it. Call at the top level of the file.
 */
export function useIpamNamespace(prefix: string): IpamNamespace {
  const kc = loadKubeConfig();
  const objects = new Objects(kc);
  let ns = '';
  beforeAll(async () => {
    await installCrds(kc, [...(await upstreamCrds('capiV1_14')), ...(await projectCrds())]);
    ns = await createTestNamespace(kc, prefix);
  });
  afterAll(async () => {
    await deleteTestNamespace(kc, ns);
  });
  return {
    kc,
    objects,
    get ns() {
      return ns;
    },
    get site() {
      return { objects, namespace: ns };
    },
  };
}
