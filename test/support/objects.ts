import * as k8s from '@kubernetes/client-node';

/** Where a kind is served, for the custom-objects client. */
export interface Kind {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly kind: string;
  readonly namespaced: boolean;
}

export const kinds = {
  claim: (version = 'v1beta2'): Kind => ({
    group: 'ipam.cluster.x-k8s.io',
    version,
    plural: 'ipaddressclaims',
    kind: 'IPAddressClaim',
    namespaced: true,
  }),
  address: (version = 'v1beta2'): Kind => ({
    group: 'ipam.cluster.x-k8s.io',
    version,
    plural: 'ipaddresses',
    kind: 'IPAddress',
    namespaced: true,
  }),
  cluster: (version = 'v1beta2'): Kind => ({ group: 'cluster.x-k8s.io', version, plural: 'clusters', kind: 'Cluster', namespaced: true }),
  pool: {
    group: 'ipam.metal.x-k8s.io',
    version: 'v1alpha1',
    plural: 'inclusterippools',
    kind: 'InClusterIPPool',
    namespaced: true,
  } as Kind,
  globalPool: {
    group: 'ipam.metal.x-k8s.io',
    version: 'v1alpha1',
    plural: 'globalinclusterippools',
    kind: 'GlobalInClusterIPPool',
    namespaced: false,
  } as Kind,
  block: {
    group: 'ipam.metal.x-k8s.io',
    version: 'v1alpha1',
    plural: 'ipaddressblocks',
    kind: 'IPAddressBlock',
    namespaced: true,
  } as Kind,
} as const;

export type Obj = {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    finalizers?: string[];
    deletionTimestamp?: string;
    generation?: number;
    ownerReferences?: object[];
  };
  spec?: any;
  status?: any;
};

/** Plain CRUD on custom objects for tests; objects are passed and returned as JSON. */
export class Objects {
  private readonly api: k8s.CustomObjectsApi;

  constructor(kc: k8s.KubeConfig) {
    this.api = kc.makeApiClient(k8s.CustomObjectsApi);
  }

  async create(kind: Kind, obj: Obj): Promise<Obj> {
    const body = { apiVersion: `${kind.group}/${kind.version}`, kind: kind.kind, ...obj };
    return (
      kind.namespaced
        ? await this.api.createNamespacedCustomObject({ ...this.ref(kind), namespace: obj.metadata.namespace ?? '', body })
        : await this.api.createClusterCustomObject({ ...this.ref(kind), body })
    ) as Obj;
  }

  async get(kind: Kind, name: string, namespace?: string): Promise<Obj | undefined> {
    try {
      return (
        kind.namespaced
          ? await this.api.getNamespacedCustomObject({ ...this.ref(kind), namespace: namespace ?? '', name })
          : await this.api.getClusterCustomObject({ ...this.ref(kind), name })
      ) as Obj;
    } catch (err: unknown) {
      if (err instanceof k8s.ApiException && err.code === 404) return undefined;
      throw err;
    }
  }

  async list(kind: Kind, namespace?: string): Promise<Obj[]> {
    const list = (
      kind.namespaced && namespace !== undefined
        ? await this.api.listNamespacedCustomObject({ ...this.ref(kind), namespace })
        : await this.api.listClusterCustomObject({ ...this.ref(kind) })
    ) as { items: Obj[] };
    return list.items;
  }

  /** JSON merge patch of the object (not status). */
  async patch(kind: Kind, name: string, namespace: string | undefined, body: object): Promise<Obj> {
    const options = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
    return (
      kind.namespaced
        ? await this.api.patchNamespacedCustomObject({ ...this.ref(kind), namespace: namespace ?? '', name, body }, options)
        : await this.api.patchClusterCustomObject({ ...this.ref(kind), name, body }, options)
    ) as Obj;
  }

  async delete(kind: Kind, name: string, namespace?: string): Promise<void> {
    try {
      if (kind.namespaced) await this.api.deleteNamespacedCustomObject({ ...this.ref(kind), namespace: namespace ?? '', name });
      else await this.api.deleteClusterCustomObject({ ...this.ref(kind), name });
    } catch (err: unknown) {
      if (!(err instanceof k8s.ApiException && err.code === 404)) throw err;
    }
  }

  private ref(kind: Kind): { group: string; version: string; plural: string } {
    return { group: kind.group, version: kind.version, plural: kind.plural };
  }
}

export function poolObject(name: string, spec: Record<string, unknown>, namespace?: string): Obj {
  return { metadata: { name, ...(namespace === undefined ? {} : { namespace }) }, spec };
}

export function claimObject(
  name: string,
  namespace: string,
  options: {
    pool: string;
    kind?: string;
    apiGroup?: string;
    clusterName?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  },
): Obj {
  return {
    metadata: {
      name,
      namespace,
      ...(options.labels === undefined ? {} : { labels: options.labels }),
      ...(options.annotations === undefined ? {} : { annotations: options.annotations }),
    },
    spec: {
      poolRef: { apiGroup: options.apiGroup ?? 'ipam.metal.x-k8s.io', kind: options.kind ?? 'InClusterIPPool', name: options.pool },
      ...(options.clusterName === undefined ? {} : { clusterName: options.clusterName }),
    },
  };
}

export function readyCondition(obj: Obj | undefined): { status?: string; reason?: string; message?: string } | undefined {
  return (obj?.status?.conditions as { type: string; status?: string; reason?: string; message?: string }[] | undefined)?.find(
    (c) => c.type === 'Ready',
  );
}
