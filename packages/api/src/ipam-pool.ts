import { Type, type Static } from '@sinclair/typebox';
import { ConditionsSchema } from './condition.js';
import { CLUSTERCTL_CRD_LABELS, buildCrd, type CrdManifest, type PrinterColumn } from './crd.js';
import type { ObjectMeta, ResourceType } from './object-meta.js';

export const IPAM_GROUP = 'ipam.metal.x-k8s.io';
export const IPAM_VERSION = 'v1alpha1';

export const InClusterIPPoolType = {
  group: IPAM_GROUP,
  version: IPAM_VERSION,
  kind: 'InClusterIPPool',
  plural: 'inclusterippools',
  namespaced: true,
} as const satisfies ResourceType;

export const GlobalInClusterIPPoolType = {
  group: IPAM_GROUP,
  version: IPAM_VERSION,
  kind: 'GlobalInClusterIPPool',
  plural: 'globalinclusterippools',
  namespaced: false,
} as const satisfies ResourceType;

export const poolTypes = [InClusterIPPoolType, GlobalInClusterIPPoolType] as const;
export type PoolKind = (typeof poolTypes)[number]['kind'];

export const IpamFinalizers = {
  /** On a pool: kept while any allocation (or Metal resource it created) remains. */
  protectPool: 'ipam.metal.x-k8s.io/protect-pool',
  /** On a claim: the address is released before the claim may go. */
  releaseAddress: 'ipam.metal.x-k8s.io/release-address',
  /** On an IPAddress: only the provider removes it, after releasing the address. */
  protectAddress: 'ipam.metal.x-k8s.io/protect-address',
} as const;

export const IpamAnnotations = {
  /** On a claim: ask for this exact address (it must be free and inside the pool). */
  requestedAddress: 'ipam.metal.x-k8s.io/requested-address',
  /** On a pool: let the delete webhook pass even though addresses are allocated (clusterctl move). */
  skipValidateDelete: 'ipam.metal.x-k8s.io/skip-validate-delete-webhook',
  /**
   * On a pool, written by the provider: the management cluster (its kube-system Namespace UID)
   * whose provider allocates from the pool. Metadata travels with `clusterctl move` and backup
   * restores, status does not: a GlobalInClusterIPPool that carries another cluster's UID is a
   * copy, and allocates nothing new until an operator writes this cluster's UID here (adopts it).
   */
  allocatingCluster: 'ipam.metal.x-k8s.io/allocating-cluster',
} as const;

export const PoolConditionTypes = {
  ready: 'Ready',
  vrfReady: 'VRFReady',
  /** True while addresses stay allocated for claims that left this management cluster unreleased (clusterctl move). */
  addressesMovedOut: 'AddressesMovedOut',
} as const;

export const PoolReasons = {
  ready: 'PoolReady',
  invalidSpec: 'InvalidSpec',
  paused: 'Paused',
  vrfNotReady: 'VRFNotReady',
  vrfReady: 'VRFReady',
  vrfProvisioning: 'Provisioning',
  vrfError: 'MetalAPIError',
  vrfCredentialsMissing: 'CredentialsMissing',
  vrfDrift: 'DriftDetected',
  /** The adopted VRF (spec.vrf.vrfID) does not exist, or the token cannot see it. */
  vrfNotFound: 'VRFNotFound',
  /** Something in Metal stands in the way and only a user can move it (a VRF of that name not ours, a gateway address in use). */
  vrfConflict: 'VRFConflict',
  /** The pool subnet is not inside the VRF's IP ranges. */
  vrfSubnetOutside: 'SubnetOutsideVRF',
  deleting: 'Deleting',
  /** The pool overlaps an older pool it must not overlap (created at the same moment past the webhook). */
  overlapping: 'OverlappingPool',
  /**
   * The pool object reached its size budget (allocations live in its status): claims wait for
   * room (PoolStatusFull) although addresses are free; releases go on.
   */
  statusFull: 'StatusFull',
  noVrf: 'NoVRF',
  /**
   * A GlobalInClusterIPPool copied from another management cluster (clusterctl move, a restore
   * into another cluster), which may still allocate from the same range: it serves the addresses
   * its IPAddresses hold and allocates nothing new until adopted.
   */
  copiedFromAnotherCluster: 'CopiedFromAnotherCluster',
  /**
   * The records of released addresses were lost (status restored without them, a deleted
   * IPAddressBlock): with addressReuseGracePeriodSeconds, nothing is handed out until status.reuseHeldUntil.
   */
  allocationRecordsLost: 'AllocationRecordsLost',
  /** AddressesMovedOut: claims that held addresses vanished without being released (their finalizers removed). */
  claimsLeftWithoutRelease: 'ClaimsLeftWithoutRelease',
} as const;

/** Events a pool's Metal side reports (Warning for drift, Normal for what it created or deleted). */
export const PoolEventReasons = {
  metalResourceCreated: 'MetalResourceCreated',
  metalResourceDeleted: 'MetalResourceDeleted',
  driftDetected: 'DriftDetected',
  metalAPIError: 'MetalAPIError',
  /** Warning: the pool's status reached its size budget and claims wait for room. */
  statusFull: 'StatusFull',
} as const;

const ADDRESS_RULE = "isIP(self) || isCIDR(self) || (self.split('-').size() == 2 && isIP(self.split('-')[0]) && isIP(self.split('-')[1]))";
const ADDRESS_MESSAGE = 'must be an IP address, a CIDR or a range a-b of two IP addresses';

const AddressEntry = Type.String({
  minLength: 1,
  maxLength: 90,
  'x-kubernetes-validations': [{ rule: ADDRESS_RULE, message: ADDRESS_MESSAGE }],
});

export const VrfCreateSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255, description: 'name of the VRF to create.' }),
    ipRanges: Type.Array(
      Type.String({
        maxLength: 43,
        'x-kubernetes-validations': [
          {
            rule: 'isCIDR(self) && (cidr(self).ip().family() == 4 ? (cidr(self).prefixLength() >= 8 && cidr(self).prefixLength() <= 29) : (cidr(self).prefixLength() >= 56 && cidr(self).prefixLength() <= 64))',
            message: 'must be an IPv4 CIDR from /8 to /29 or an IPv6 CIDR from /56 to /64',
          },
        ],
      }),
      { minItems: 1, maxItems: 16, description: 'ranges the VRF owns; the pool subnet must lie inside one of them.' },
    ),
    localASN: Type.Optional(Type.Integer({ minimum: 1, maximum: 4294967295, format: 'int64', description: 'BGP ASN of the VRF.' })),
  },
  { description: 'create a VRF that the pool owns (deleted with the pool).' },
);

export const VrfSpecSchema = Type.Object(
  {
    projectID: Type.String({ format: 'uuid', maxLength: 36, description: 'Equinix Metal project id.' }),
    metro: Type.String({ pattern: '^[a-z]{2}$', description: 'Equinix Metal metro code, e.g. da.' }),
    credentialsSecretRef: Type.Object(
      {
        name: Type.String({ minLength: 1, maxLength: 253 }),
        namespace: Type.Optional(
          Type.String({
            minLength: 1,
            maxLength: 63,
            description: 'defaults to the pool namespace, or the controller namespace for a global pool.',
          }),
        ),
      },
      { description: 'Secret holding the Metal API token under the key apiToken.' },
    ),
    vrfID: Type.Optional(
      Type.String({ format: 'uuid', maxLength: 36, description: 'adopt this existing VRF (never deleted by the pool).' }),
    ),
    create: Type.Optional(VrfCreateSchema),
    vxlan: Type.Optional(
      Type.Integer({ minimum: 2, maximum: 3999, description: 'VLAN (vxlan id) to attach; created in the metro when absent.' }),
    ),
    metalGateway: Type.Optional(Type.Boolean({ description: 'create a Metal Gateway on the VLAN for the pool subnet; needs vxlan.' })),
  },
  {
    description: 'where the pool range lives in Equinix Metal.',
    'x-kubernetes-validations': [
      { rule: 'has(self.vrfID) != has(self.create)', message: 'set exactly one of vrfID (adopt an existing VRF) or create' },
      { rule: '!has(self.metalGateway) || !self.metalGateway || has(self.vxlan)', message: 'metalGateway needs vxlan' },
    ],
  },
);
export type VrfSpec = Static<typeof VrfSpecSchema>;

export const PoolSpecSchema = Type.Object({
  addresses: Type.Array(AddressEntry, {
    minItems: 1,
    maxItems: 256,
    description: 'addresses the pool hands out: IPs, CIDRs or a-b ranges, all of one family, inside the prefix.',
  }),
  prefix: Type.Integer({ minimum: 0, maximum: 128, description: 'prefix length of the subnet the addresses live in.' }),
  gateway: Type.Optional(
    Type.String({
      maxLength: 39,
      'x-kubernetes-validations': [{ rule: 'isIP(self)', message: 'must be an IP address' }],
      description: 'gateway of the subnet; never allocated.',
    }),
  ),
  excludedAddresses: Type.Optional(
    Type.Array(AddressEntry, { maxItems: 256, description: 'addresses (IPs, CIDRs, ranges) that are never allocated.' }),
  ),
  allocateReservedIPAddresses: Type.Optional(
    Type.Boolean({ description: 'allow the network and broadcast addresses of the subnet to be allocated.' }),
  ),
  addressReuseGracePeriodSeconds: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 31536000,
      description: 'how long a released address stays reserved before it is handed out again.',
    }),
  ),
  vrf: Type.Optional(VrfSpecSchema),
});
export type PoolSpec = Static<typeof PoolSpecSchema>;

const Count = Type.Integer({ minimum: 0, format: 'int64' });

/** The Metal resources behind a VRF-backed pool, in the order they are created (deleted in reverse). */
export const VrfResourceKinds = ['VRF', 'VLAN', 'Reservation', 'MetalGateway'] as const;
export type VrfResourceKind = (typeof VrfResourceKinds)[number];

export const PoolVrfStatusSchema = Type.Object({
  vrfID: Type.Optional(Type.String()),
  vlanID: Type.Optional(Type.String()),
  vxlan: Type.Optional(Type.Integer()),
  reservationID: Type.Optional(Type.String()),
  metalGatewayID: Type.Optional(Type.String()),
  subnet: Type.Optional(Type.String({ description: 'the pool subnet as reserved in the VRF (network/cidr).' })),
  gatewayAddress: Type.Optional(Type.String({ description: 'the address the Metal Gateway takes; never allocated.' })),
  created: Type.Optional(
    Type.Array(Type.Unsafe<VrfResourceKind>({ type: 'string', enum: [...VrfResourceKinds] }), {
      maxItems: 4,
      'x-kubernetes-list-type': 'set',
      description: 'the Metal resources this pool created and will delete with it.',
    }),
  ),
});
export type PoolVrfStatus = Static<typeof PoolVrfStatusSchema>;

export const PoolStatusSchema = Type.Object({
  ipAddresses: Type.Optional(
    Type.Object(
      { total: Count, used: Count, free: Count, outOfRange: Count },
      { description: 'address counts; very large IPv6 pools are clamped to the int64 maximum.' },
    ),
  ),
  allocations: Type.Optional(
    // Type.Record would emit patternProperties, which structural schemas forbid.
    Type.Unsafe<Record<string, string>>({
      type: 'object',
      additionalProperties: { type: 'string', maxLength: 320 },
      description:
        'allocations as metal-l2 before IPAddressBlocks kept them (address -> [namespace/]claim[@releasedAt]); moved into blocks, then dropped, by the provider.',
    }),
  ),
  blocks: Type.Optional(
    Type.Object(
      {
        size: Type.Integer({ minimum: 1, format: 'int64', description: 'addresses per IPAddressBlock (a power of two).' }),
        namespace: Type.String({ maxLength: 63, description: 'where the pool’s IPAddressBlocks live.' }),
        count: Type.Optional(
          Type.Integer({
            minimum: 0,
            format: 'int64',
            description: 'how many IPAddressBlocks the pool has (they are never deleted while it lives): fewer means one was lost.',
          }),
        ),
      },
      { description: 'where this pool’s allocations live: chosen once, by the first writer, and kept.' },
    ),
  ),
  reuseHeldUntil: Type.Optional(
    Type.String({
      format: 'date-time',
      description:
        'with addressReuseGracePeriodSeconds: the records of released addresses were lost (a restore, a move, a deleted IPAddressBlock), so no address is handed out before this time, when any grace period they were in has ended.',
    }),
  ),
  vrf: Type.Optional(PoolVrfStatusSchema),
  conditions: Type.Optional(ConditionsSchema),
  observedGeneration: Type.Optional(Type.Integer({ format: 'int64' })),
});
export type PoolStatus = Static<typeof PoolStatusSchema>;

function poolSchema(kind: string): ReturnType<typeof Type.Object> {
  return Type.Object(
    {
      apiVersion: Type.Optional(Type.String()),
      kind: Type.Optional(Type.String()),
      metadata: Type.Optional(Type.Object({})),
      spec: PoolSpecSchema,
      status: Type.Optional(PoolStatusSchema),
    },
    { description: `${kind} hands out addresses to Cluster API IPAddressClaims.`, required: ['spec'] },
  );
}

export interface InClusterIPPool {
  apiVersion: `${typeof IPAM_GROUP}/${typeof IPAM_VERSION}`;
  kind: PoolKind;
  metadata: ObjectMeta;
  spec: PoolSpec;
  status?: PoolStatus;
}
/** Both pool kinds share spec and status; `kind` tells them apart. */
export type IPPool = InClusterIPPool;

const poolColumns: readonly PrinterColumn[] = [
  { name: 'Addresses', type: 'string', jsonPath: '.spec.addresses', description: 'addresses the pool hands out' },
  { name: 'Prefix', type: 'integer', jsonPath: '.spec.prefix' },
  { name: 'Total', type: 'integer', jsonPath: '.status.ipAddresses.total' },
  { name: 'Free', type: 'integer', jsonPath: '.status.ipAddresses.free' },
  { name: 'Used', type: 'integer', jsonPath: '.status.ipAddresses.used', priority: 1 },
  { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
  { name: 'Reason', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].reason', priority: 1 },
];

export function poolCrds(): CrdManifest[] {
  return poolTypes.map((type) =>
    buildCrd({
      group: type.group,
      kind: type.kind,
      plural: type.plural,
      singular: type.kind.toLowerCase(),
      scope: type.namespaced ? 'Namespaced' : 'Cluster',
      categories: ['cluster-api', 'metal-l2'],
      labels: CLUSTERCTL_CRD_LABELS,
      versions: [
        { name: type.version, served: true, storage: true, schema: poolSchema(type.kind), printerColumns: poolColumns, hasStatus: true },
      ],
    }),
  );
}
