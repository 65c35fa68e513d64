import { Type, type Static } from '@sinclair/typebox';
import { CLUSTERCTL_CRD_LABELS, buildCrd, type CrdManifest, type PrinterColumn } from './crd.js';
import { IPAM_GROUP, IPAM_VERSION, type PoolKind } from './ipam-pool.js';
import type { ObjectMeta, ResourceType } from './object-meta.js';

// A pool's allocations live in blocks: one object per aligned sub-range of the pool's range, each
// with its allocations in its own status and its own resourceVersion (in the manner of Calico's
// IPAM blocks), so no object grows with the pool's fill. Written only by the provider.

export const IPAddressBlockType = {
  group: IPAM_GROUP,
  version: IPAM_VERSION,
  kind: 'IPAddressBlock',
  plural: 'ipaddressblocks',
  namespaced: true,
} as const satisfies ResourceType;

export const IpamLabels = {
  /** On a block: the UID of the pool it belongs to (the cache indexes blocks by it). */
  poolUid: 'ipam.metal.x-k8s.io/pool-uid',
} as const;

export const BlockSpecSchema = Type.Object({
  poolRef: Type.Object(
    {
      kind: Type.Unsafe<PoolKind>({ type: 'string', enum: ['InClusterIPPool', 'GlobalInClusterIPPool'] }),
      name: Type.String({ minLength: 1, maxLength: 253 }),
      namespace: Type.Optional(Type.String({ maxLength: 63, description: 'absent for a GlobalInClusterIPPool.' })),
      uid: Type.String({ maxLength: 36 }),
    },
    { description: 'the pool this block belongs to.' },
  ),
  cidr: Type.String({
    maxLength: 43,
    'x-kubernetes-validations': [
      { rule: 'isCIDR(self)', message: 'must be a CIDR' },
      { rule: 'self == oldSelf', message: 'a block never changes its range' },
    ],
    description: 'the aligned sub-range of the pool this block holds the allocations of.',
  }),
});
export type BlockSpec = Static<typeof BlockSpecSchema>;

export const BlockStatusSchema = Type.Object({
  allocations: Type.Optional(
    Type.Unsafe<Record<string, string>>({
      type: 'object',
      additionalProperties: { type: 'string', maxLength: 320 },
      description: 'address -> [namespace/]claim[@releasedAt], as a pool status carried it before blocks.',
    }),
  ),
  used: Type.Optional(Type.Integer({ minimum: 0, description: 'allocations held (released-in-grace ones included).' })),
});
export type BlockStatus = Static<typeof BlockStatusSchema>;

export interface IPAddressBlock {
  apiVersion?: `${typeof IPAM_GROUP}/${typeof IPAM_VERSION}`;
  kind?: 'IPAddressBlock';
  metadata: ObjectMeta;
  spec: BlockSpec;
  status?: BlockStatus;
}

const blockColumns: readonly PrinterColumn[] = [
  { name: 'Pool', type: 'string', jsonPath: '.spec.poolRef.name' },
  { name: 'CIDR', type: 'string', jsonPath: '.spec.cidr' },
  { name: 'Used', type: 'integer', jsonPath: '.status.used' },
];

export function blockCrds(): CrdManifest[] {
  const t = IPAddressBlockType;
  return [
    buildCrd({
      group: t.group,
      kind: t.kind,
      plural: t.plural,
      singular: 'ipaddressblock',
      scope: 'Namespaced',
      categories: ['metal-l2'],
      // Moved with their pool: a move carries no status and the moved pool has a new UID, so it
      // rebuilds its blocks (named by that UID) from IPAddresses.
      labels: CLUSTERCTL_CRD_LABELS,
      versions: [
        {
          name: t.version,
          served: true,
          storage: true,
          schema: Type.Object(
            {
              apiVersion: Type.Optional(Type.String()),
              kind: Type.Optional(Type.String()),
              metadata: Type.Optional(Type.Object({})),
              spec: BlockSpecSchema,
              status: Type.Optional(BlockStatusSchema),
            },
            { description: 'IPAddressBlock holds the allocations of one aligned sub-range of a pool.', required: ['spec'] },
          ),
          printerColumns: blockColumns,
          hasStatus: true,
        },
      ],
    }),
  ];
}
