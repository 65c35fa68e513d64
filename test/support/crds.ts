import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { repoRoot, requireShared } from './paths.js';
import { timeouts } from './timeouts.js';
import { waitFor } from './wait-for.js';

type Crd = k8s.V1CustomResourceDefinition;

/**
 * The upstream CRD sets have no MachineHealthCheck; the network controller watches it when served,
 * so a minimal stand-in (any spec) makes the API server serve it, as a real cluster does.
 */
export function machineHealthCheckStandIn(): Crd {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'machinehealthchecks.cluster.x-k8s.io' },
    spec: {
      group: 'cluster.x-k8s.io',
      scope: 'Namespaced',
      names: {
        kind: 'MachineHealthCheck',
        plural: 'machinehealthchecks',
        singular: 'machinehealthcheck',
        listKind: 'MachineHealthCheckList',
      },
      versions: [
        {
          name: 'v1beta2',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } as k8s.V1JSONSchemaProps },
        },
      ],
    },
  };
}

/** Upstream CRD sets in ../shared/upstream-crds, by the folder they sit in. */
export const upstreamCrdSets = {
  capiV1_14: 'cluster-api-v1.14.0',
  capiV1_10: 'cluster-api-v1.10.10',
  capiV1_7: 'cluster-api-v1.7.9',
  capp: 'cluster-api-provider-packet',
  inClusterIpam: 'cluster-api-ipam-provider-in-cluster',
} as const;
export type UpstreamCrdSet = keyof typeof upstreamCrdSets;

async function readCrdFiles(dir: string): Promise<Crd[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.yaml') || f.endsWith('.yml')).sort();
  const crds: Crd[] = [];
  for (const file of files) {
    for (const doc of parseAllDocuments(await readFile(join(dir, file), 'utf8'))) {
      const value = doc.toJS() as Crd | null;
      if (value?.kind === 'CustomResourceDefinition') crds.push(value);
    }
  }
  return crds;
}

export async function upstreamCrds(set: UpstreamCrdSet): Promise<Crd[]> {
  const shared = requireShared(`installing the upstream CRD set ${set}`);
  return readCrdFiles(join(shared, 'upstream-crds', upstreamCrdSets[set]));
}

/** The CRDs this project owns, as generated into crds/. */
export async function projectCrds(): Promise<Crd[]> {
  return readCrdFiles(join(repoRoot, 'crds'));
}

/**
 * Creates or updates each CRD, then waits until it is Established and its resources are listed
 * in discovery for every served version (both are needed before a client can use it).
 */
export async function installCrds(kc: k8s.KubeConfig, crds: readonly Crd[]): Promise<void> {
  const ext = kc.makeApiClient(k8s.ApiextensionsV1Api);
  // The typed apiextensions client re-serializes schemas through its models and drops fields such
  // as x-kubernetes-int-or-string; the custom-objects client sends the object as it is.
  const raw = kc.makeApiClient(k8s.CustomObjectsApi);
  const crdResource = { group: 'apiextensions.k8s.io', version: 'v1', plural: 'customresourcedefinitions' } as const;
  for (const crd of crds) {
    const name = crd.metadata?.name ?? '';
    try {
      await raw.createClusterCustomObject({ ...crdResource, body: crd });
    } catch (err: unknown) {
      if (!(err instanceof k8s.ApiException && err.code === 409)) throw err;
      // Another test file installed it first, or an earlier version is there: take ours.
      await waitFor(
        `CRD ${name} updated`,
        async () => {
          const current = await ext.readCustomResourceDefinition({ name });
          try {
            const body = { ...crd, metadata: { ...crd.metadata, resourceVersion: current.metadata?.resourceVersion } };
            await raw.replaceClusterCustomObject({ ...crdResource, name, body });
            return true;
          } catch (e: unknown) {
            if (e instanceof k8s.ApiException && e.code === 409) return false;
            throw e;
          }
        },
        { timeoutMs: timeouts.crdEstablished },
      );
    }
  }
  await Promise.all(crds.map((crd) => waitForCrdReady(kc, crd)));
}

async function waitForCrdReady(kc: k8s.KubeConfig, crd: Crd): Promise<void> {
  const ext = kc.makeApiClient(k8s.ApiextensionsV1Api);
  const name = crd.metadata?.name ?? '';
  await waitFor(
    `CRD ${name} Established`,
    async () => {
      const current = await ext.readCustomResourceDefinition({ name });
      const conditions = current.status?.conditions ?? [];
      return conditions.some((c) => c.type === 'Established' && c.status === 'True');
    },
    { timeoutMs: timeouts.crdEstablished },
  );
  const group = crd.spec.group;
  const plural = crd.spec.names.plural;
  for (const version of crd.spec.versions.filter((v) => v.served)) {
    await waitFor(
      `${plural}.${group}/${version.name} in discovery`,
      async () => {
        const list = await kc.makeApiClient(k8s.CustomObjectsApi).getAPIResources({ group, version: version.name });
        return list.resources.some((r) => r.name === plural);
      },
      { timeoutMs: timeouts.crdEstablished },
    );
  }
}
