import { Type, type TObject, type TSchema } from '@sinclair/typebox';

export interface PrinterColumn {
  readonly name: string;
  readonly type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  readonly jsonPath: string;
  readonly description?: string;
  readonly priority?: number;
}

/**
 * The labels every CRD of ours carries, for clusterctl. `clusterctl move` discovers the kinds it
 * moves by listing the CRDs that have the label `clusterctl.cluster.x-k8s.io` (clusterctl init
 * adds it to the components it installs; a Helm install does not, so ours carry it themselves),
 * then moves every object of a `move-hierarchy` kind with what it owns. Without the first label a
 * Helm-installed metal-l2 is invisible to a move: pools, templates, MachineNetworks and
 * ClusterEndpoints stay behind while the claims that name them move.
 */
export const CLUSTERCTL_CRD_LABELS: Readonly<Record<string, string>> = {
  'clusterctl.cluster.x-k8s.io': '',
  'clusterctl.cluster.x-k8s.io/move-hierarchy': '',
  'cluster.x-k8s.io/provider': 'ipam-metal-l2',
};

export interface CrdSource {
  readonly group: string;
  readonly kind: string;
  readonly plural: string;
  readonly singular: string;
  readonly listKind?: string;
  readonly shortNames?: readonly string[];
  readonly categories?: readonly string[];
  readonly scope: 'Namespaced' | 'Cluster';
  readonly labels?: Readonly<Record<string, string>>;
  readonly versions: readonly {
    readonly name: string;
    readonly served: boolean;
    readonly storage: boolean;
    readonly schema: TSchema;
    readonly printerColumns?: readonly PrinterColumn[];
    readonly hasStatus: boolean;
  }[];
}

/**
 * The top level of a kind's schema: spec required, status optional, and apiVersion, kind and
 * metadata left to the API server (it validates them itself).
 */
export function kindSchema(description: string, spec: TObject, status?: TObject): TObject {
  return Type.Object(
    {
      apiVersion: Type.Optional(Type.String()),
      kind: Type.Optional(Type.String()),
      metadata: Type.Optional(Type.Object({})),
      spec,
      ...(status === undefined ? {} : { status: Type.Optional(status) }),
    },
    { description, required: ['spec'] },
  );
}

/** A CustomResourceDefinition as plain JSON, the way crds/ and the chart carry it. */
export type CrdManifest = Record<string, unknown>;

// TypeBox marks schemas with symbol keys; a JSON round trip keeps only what Kubernetes reads.
function plain(schema: TSchema): unknown {
  return JSON.parse(JSON.stringify(schema)) as unknown;
}

/** Builds the CRD manifest for a kind from its schema: the one place CRD YAML comes from. */
export function buildCrd(source: CrdSource): CrdManifest {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${source.plural}.${source.group}`,
      ...(source.labels === undefined ? {} : { labels: { ...source.labels } }),
    },
    spec: {
      group: source.group,
      names: {
        kind: source.kind,
        listKind: source.listKind ?? `${source.kind}List`,
        plural: source.plural,
        singular: source.singular,
        ...(source.shortNames === undefined ? {} : { shortNames: [...source.shortNames] }),
        ...(source.categories === undefined ? {} : { categories: [...source.categories] }),
      },
      scope: source.scope,
      versions: source.versions.map((v) => ({
        name: v.name,
        served: v.served,
        storage: v.storage,
        ...(v.hasStatus ? { subresources: { status: {} } } : {}),
        ...(v.printerColumns === undefined
          ? {}
          : { additionalPrinterColumns: [...v.printerColumns, { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }] }),
        schema: { openAPIV3Schema: plain(v.schema) },
      })),
    },
  };
}
