import { afterAll, beforeAll } from '@jest/globals';
import type * as k8s from '@kubernetes/client-node';
import type { OwnedControlPlane } from '@metal-l2/local-control-plane';
import { createTestNamespace, deleteTestNamespace, loadKubeConfig, testKubeconfigPath } from '@metal-l2/test-support/cluster';
import { installCrds, projectCrds, upstreamCrds } from '@metal-l2/test-support/crds';
import { Objects } from '@metal-l2/test-support/objects';
import { startPrivateControlPlane, stopPrivateControlPlane } from '@metal-l2/test-support/test-control-planes';
import type { ClaimSite } from './claims.js';

export interface Stoppable {
  stop(): Promise<void>;
}

export interface IpamNamespaceOptions {
  /**
   * A control plane of the file's own, labelled so, instead of the shared one: for a file that
   * restarts the API server, or needs CRDs the shared one cannot hold at the same time.
   */
  readonly privateControlPlane?: string;
  /** Which CAPI release's CRDs go beside ours (default v1.14, IPAM v1beta2); false for ours alone. */
  readonly capi?: 'capiV1_14' | 'capiV1_7' | false;
  /** Runs first after the file's tests, while its controllers still run (to release what they hold). */
  readonly beforeTeardown?: () => Promise<void>;
}

export interface IpamNamespace {
  readonly kc: k8s.KubeConfig;
  readonly objects: Objects;
  /** The kubeconfig file of the control plane the file runs on, for controllers in child processes. */
  readonly kubeconfigPath: string;
  /** The file's private control plane (privateControlPlane only). */
  readonly plane: OwnedControlPlane;
  /** This file's namespace; set once beforeAll ran. */
  readonly ns: string;
  readonly site: ClaimSite;
  /** The file's namespace and the extra ones, in the order they were made. */
  readonly namespaces: readonly string[];
  /** One more namespace for this file, deleted with its own. */
  extraNamespace(prefix: string): Promise<string>;
  /** Stops `it` after the file's tests, before the namespaces go (last registered, first stopped). Returns `it`. */
  stopAfterAll<T extends Stoppable>(it: T): T;
}

/**
 * Every ipam-controller test file's setup: a control plane (the run's shared one, or one of the
 * file's own) with the CAPI and metal-l2 CRDs installed, and a fresh namespace for the file. After
 * the file: `beforeTeardown`, then whatever was handed to stopAfterAll, then the namespaces (or the
 * private control plane) go. Call at the top level of the file, before its own hooks.
 */
export function useIpamNamespace(prefix: string, options: IpamNamespaceOptions = {}): IpamNamespace {
  const isPrivate = options.privateControlPlane !== undefined;
  let plane: OwnedControlPlane | undefined;
  let kc: k8s.KubeConfig | undefined = isPrivate ? undefined : loadKubeConfig();
  let objects: Objects | undefined = kc === undefined ? undefined : new Objects(kc);
  let ns = '';
  const namespaces: string[] = [];
  const running: Stoppable[] = [];
  const ready = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`${what} is there once beforeAll ran (the private control plane starts there)`);
    return value;
  };

  beforeAll(async () => {
    if (options.privateControlPlane !== undefined) {
      plane = await startPrivateControlPlane(options.privateControlPlane);
      kc = loadKubeConfig(plane.state.kubeconfig);
      objects = new Objects(kc);
    }
    const capi = options.capi ?? 'capiV1_14';
    await installCrds(ready(kc, 'kc'), [...(capi === false ? [] : await upstreamCrds(capi)), ...(await projectCrds())]);
    ns = await createTestNamespace(ready(kc, 'kc'), prefix);
    namespaces.push(ns);
  });
  afterAll(async () => {
    try {
      await options.beforeTeardown?.();
    } finally {
      for (const it of running.reverse()) await it.stop();
      if (plane !== undefined) await stopPrivateControlPlane(plane);
      else if (kc !== undefined) for (const name of namespaces) await deleteTestNamespace(kc, name);
    }
  });

  return {
    get kc() {
      return ready(kc, 'kc');
    },
    get objects() {
      return ready(objects, 'objects');
    },
    get kubeconfigPath() {
      return plane?.state.kubeconfig ?? testKubeconfigPath();
    },
    get plane() {
      return ready(plane, 'the private control plane');
    },
    get ns() {
      return ns;
    },
    get site() {
      return { objects: ready(objects, 'objects'), namespace: ns };
    },
    namespaces,
    async extraNamespace(extra: string): Promise<string> {
      const name = await createTestNamespace(ready(kc, 'kc'), extra);
      namespaces.push(name);
      return name;
    },
    stopAfterAll<T extends Stoppable>(it: T): T {
      running.push(it);
      return it;
    },
  };
}
