import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, test } from '@jest/globals';
import * as k8s from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { loadKubeConfig, testKubeconfigPath } from '@metal-l2/test-support/cluster';
import { installCrds, projectCrds } from '@metal-l2/test-support/crds';
import { repoRoot } from '@metal-l2/test-support/paths';

// The clusterctl artifacts: metadata.yaml maps the release series to the contract, and
// ipam-components.yaml (generated from the chart) is what `clusterctl init --ipam metal-l2`
// applies. The API server judges every object of it (dry run), with our CRDs and stand-ins for
// cert-manager's two kinds installed, as clusterctl init would have cert-manager.

const run = promisify(execFile);
const dir = join(repoRoot, 'charts', 'clusterctl');
const PROVIDER = 'ipam-metal-l2';

interface Doc {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
}

async function components(): Promise<Doc[]> {
  return parseAllDocuments(await readFile(join(dir, 'ipam-components.yaml'), 'utf8')).map((d) => d.toJS() as Doc);
}

/** A minimal CRD standing in for one of cert-manager's kinds (any spec accepted). */
function standIn(kind: string, plural: string): k8s.V1CustomResourceDefinition {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.cert-manager.io` },
    spec: {
      group: 'cert-manager.io',
      scope: 'Namespaced',
      names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } as k8s.V1JSONSchemaProps },
        },
      ],
    },
  };
}

describe('clusterctl artifacts', () => {
  test('metadata.yaml maps the 0.1 release series to contract v1beta1', async () => {
    const [meta] = parseAllDocuments(await readFile(join(dir, 'metadata.yaml'), 'utf8')).map(
      (d) => d.toJS() as { apiVersion: string; kind: string; releaseSeries: unknown[] },
    );
    expect(meta).toMatchObject({ apiVersion: 'clusterctl.cluster.x-k8s.io/v1alpha3', kind: 'Metadata' });
    const version = (JSON.parse(await readFile(join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version;
    const [major, minor] = version.split('.').map(Number);
    expect(meta?.releaseSeries).toContainEqual({ major, minor, contract: 'v1beta1' });
  });

  test('ipam-components.yaml: one Namespace, the provider label on everything, the move label on our CRDs, no generated Secret', async () => {
    const docs = await components();
    expect(docs.filter((d) => d.kind === 'Namespace').map((d) => d.metadata.name)).toEqual(['metal-l2-system']);
    for (const d of docs)
      expect([d.kind, d.metadata.name, d.metadata.labels?.['cluster.x-k8s.io/provider']]).toEqual([d.kind, d.metadata.name, PROVIDER]);
    const crds = docs.filter((d) => d.kind === 'CustomResourceDefinition');
    expect(crds.map((d) => d.metadata.name).sort()).toEqual([
      'clusterendpoints.network.metal.x-k8s.io',
      'clusterendpointtemplates.network.metal.x-k8s.io',
      'globalinclusterippools.ipam.metal.x-k8s.io',
      'inclusterippools.ipam.metal.x-k8s.io',
      'ipaddressblocks.ipam.metal.x-k8s.io',
      'machinenetworks.network.metal.x-k8s.io',
      'machinenetworktemplates.network.metal.x-k8s.io',
    ]);
    for (const crd of crds) {
      expect(crd.metadata.labels?.['clusterctl.cluster.x-k8s.io/move-hierarchy']).toBe('');
      // clusterctl move discovers kinds by this label only.
      expect(crd.metadata.labels?.['clusterctl.cluster.x-k8s.io']).toBe('');
    }
    expect(docs.filter((d) => d.kind === 'Secret')).toEqual([]);
    const namespaced = docs.filter((d) => d.metadata.namespace !== undefined);
    expect(new Set(namespaced.map((d) => d.metadata.namespace))).toEqual(new Set(['metal-l2-system']));
    expect(
      docs
        .filter((d) => d.kind === 'Deployment')
        .map((d) => d.metadata.name)
        .sort(),
    ).toEqual(['metal-l2-ipam', 'metal-l2-network']);
  });

  test('the API server accepts every object (kubectl apply --dry-run=server)', async () => {
    const kc = loadKubeConfig();
    // CRDs first for real (a dry-run CRD does not serve its kind to the objects after it).
    await installCrds(kc, [...(await projectCrds()), standIn('Certificate', 'certificates'), standIn('Issuer', 'issuers')]);
    // So does a dry-run Namespace for the objects in it: create it, as the first step of an apply would.
    const core = kc.makeApiClient(k8s.CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: 'metal-l2-system' } } }).catch((err: unknown) => {
      if (!(err instanceof k8s.ApiException && err.code === 409)) throw err;
    });
    const kubectl = join(process.env['METAL_L2_TEST_BIN_DIR'] ?? '', 'kubectl');
    const { stdout } = await run(
      kubectl,
      ['--kubeconfig', testKubeconfigPath(), 'apply', '--dry-run=server', '-f', join(dir, 'ipam-components.yaml')],
      {
        maxBuffer: 16 * 1024 * 1024,
      },
    );
    const lines = stdout.trim().split('\n');
    const docs = await components();
    expect(lines).toHaveLength(docs.length);
    for (const line of lines) expect(line).toMatch(/ (created|configured|unchanged) \(server dry run\)$/);
  });
});
