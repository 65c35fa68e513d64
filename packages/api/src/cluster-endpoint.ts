import { Type, type Static } from '@sinclair/typebox';
import { ConditionsSchema } from './condition.js';
import { CLUSTERCTL_CRD_LABELS, buildCrd, kindSchema, type CrdManifest, type PrinterColumn } from './crd.js';
import { NETWORK_GROUP, NETWORK_VERSION, PoolRefSchema, type NetworkObject } from './machine-network.js';
import type { ResourceType } from './object-meta.js';

export const ClusterEndpointTemplateType = {
  group: NETWORK_GROUP,
  version: NETWORK_VERSION,
  kind: 'ClusterEndpointTemplate',
  plural: 'clusterendpointtemplates',
  namespaced: true,
} as const satisfies ResourceType;

export const ClusterEndpointType = {
  group: NETWORK_GROUP,
  version: NETWORK_VERSION,
  kind: 'ClusterEndpoint',
  plural: 'clusterendpoints',
  namespaced: true,
} as const satisfies ResourceType;

export const ClusterEndpointAnnotations = {
  /** On a Cluster (set by the user; on a topology Cluster too, which a ClusterClass cannot set): the ClusterEndpointTemplate it uses. */
  template: 'network.metal.x-k8s.io/endpoint-template',
  /**
   * On a Cluster: the `spec.paused` beside it is ours (value: when the hold began, RFC 3339). Only a
   * pause carrying this marker is ever removed by the network controller.
   */
  hold: 'network.metal.x-k8s.io/endpoint-hold',
  /**
   * On a Cluster we hold: why it still waits, as `<Reason>: <message>` (the template not found, the
   * pool missing or exhausted, the claim not answered...), so `kubectl describe cluster` shows it
   * with the Warning Event of the same reason. Removed with the hold.
   */
  holdReason: 'network.metal.x-k8s.io/endpoint-hold-reason',
} as const;

/** Label on the endpoint IPAddressClaim: the Cluster it is for (shortened with a hash beyond 63 characters). */
export const CLUSTER_ENDPOINT_LABEL = 'network.metal.x-k8s.io/cluster-endpoint';

export const ClusterEndpointFinalizers = {
  /** On a ClusterEndpoint: its claim is released before it may go. */
  clusterEndpoint: 'network.metal.x-k8s.io/cluster-endpoint',
  /**
   * On the endpoint IPAddressClaim: its deletion (kubectl delete, owner garbage collection) is held
   * while its address is in use: the Cluster's control-plane endpoint, or announced by a machine
   * of the Cluster that was given the VIP announcer. An IPAM provider that keeps a deleting claim's
   * address while other finalizers remain (ours, metal3's) keeps the address as long.
   */
  endpointInUse: 'network.metal.x-k8s.io/endpoint-in-use',
} as const;

/** The API server port kubeadm listens on unless told otherwise. */
export const DEFAULT_ENDPOINT_PORT = 6443;

export const ClusterEndpointConditionTypes = {
  ready: 'Ready',
  addressAllocated: 'AddressAllocated',
  endpointSet: 'EndpointSet',
} as const;

/** Reasons of ClusterEndpoint conditions. PascalCase and never renamed: users alert on them. */
export const ClusterEndpointReasons = {
  // AddressAllocated (WaitingForAddress also on EndpointSet while there is no address yet)
  addressAllocated: 'AddressAllocated',
  waitingForAddress: 'WaitingForAddress',
  poolExhausted: 'PoolExhausted',
  /** The claim's pool is missing or not ready (the claim's own reason). */
  poolNotReady: 'PoolNotReady',
  claimConflict: 'ClaimConflict',
  claimRefused: 'ClaimRefused',
  /** The claim of this name belongs to a former Cluster of the same name (another uid): a fresh one is made once it is gone. */
  waitingForFormerClaim: 'WaitingForFormerClaim',
  /**
   * The address stays claimed although the Cluster gave it up (another endpoint, the claim
   * deleted, the annotation removed): it is the Cluster's endpoint or a machine of the Cluster
   * still announces it. The message says what gives it back.
   */
  addressInUse: 'AddressInUse',
  /**
   * The Cluster runs on the address this ClusterEndpoint claimed, but its claim is bound to another
   * one (the claim was re-made and its IPAM provider did not honour the requested address).
   */
  addressLost: 'AddressLost',
  // EndpointSet
  endpointSet: 'EndpointSet',
  /**
   * The Cluster has another controlPlaneEndpoint (set by hand, or copied by Cluster API first): it
   * is never overwritten, no address is kept claimed for it, and a hold of ours ends.
   */
  endpointAlreadySet: 'EndpointAlreadySet',
  // Ready and all
  ready: 'Ready',
  templateNotFound: 'TemplateNotFound',
  /** The annotation was removed while the Cluster runs on the claimed address: both stay, and go with the Cluster. */
  unlinked: 'Unlinked',
  deleting: 'Deleting',
} as const;
export type ClusterEndpointReason = (typeof ClusterEndpointReasons)[keyof typeof ClusterEndpointReasons];

export const ClusterEndpointEventReasons = {
  claimCreated: 'ClaimCreated',
  endpointSet: 'EndpointSet',
  endpointAlreadySet: 'EndpointAlreadySet',
  pauseReleased: 'PauseReleased',
  claimReleased: 'ClaimReleased',
  /** The address is kept claimed while it is in use (see ClusterEndpointReasons.addressInUse). */
  addressInUse: 'AddressInUse',
} as const;

const IMMUTABLE = {
  rule: 'self == oldSelf',
  message: 'spec is immutable: create a new ClusterEndpointTemplate; a Cluster keeps the endpoint it was given',
};

export const ClusterEndpointTemplateSpecSchema = Type.Object(
  {
    vxlan: Type.Integer({
      minimum: 2,
      maximum: 3999,
      description:
        "vxlan id of the VLAN the endpoint address lives on (as the Metal API names it); the control-plane machines' MachineNetworkTemplate must carry it on a port.",
    }),
    addressFromPool: Type.Object(
      {
        apiGroup: PoolRefSchema.properties.apiGroup,
        kind: PoolRefSchema.properties.kind,
        name: PoolRefSchema.properties.name,
      },
      {
        description:
          "the pool the endpoint address is claimed from (one IPAddressClaim owned by the Cluster; any CAPI IPAM provider). Namespaced kinds are looked up in the Cluster's namespace.",
      },
    ),
    port: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 65535, default: DEFAULT_ENDPOINT_PORT, description: 'the API server port on the endpoint.' }),
    ),
    virtualRouterID: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 255,
        description:
          "the VRRP/ARP virtual router id the VIP announcer uses; must be unique among the clusters sharing the VLAN. Default: derived from the Cluster's UID (recorded in the ClusterEndpoint status).",
      }),
    ),
  },
  { 'x-kubernetes-validations': [IMMUTABLE] },
);
export type ClusterEndpointTemplateSpec = Static<typeof ClusterEndpointTemplateSpecSchema>;

export const ClusterEndpointSpecSchema = Type.Object(
  {
    templateName: Type.String({ minLength: 1, maxLength: 253, description: 'the ClusterEndpointTemplate this spec was copied from.' }),
    ...ClusterEndpointTemplateSpecSchema.properties,
  },
  { 'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'spec is a snapshot of the template and is immutable' }] },
);
export type ClusterEndpointSpec = Static<typeof ClusterEndpointSpecSchema>;

export const ClusterEndpointStatusSchema = Type.Object({
  address: Type.Optional(Type.String({ description: 'the endpoint address, from the IPAddress bound to the claim.' })),
  prefix: Type.Optional(Type.Integer({ description: "the prefix length of the address's subnet on the VLAN." })),
  port: Type.Optional(Type.Integer({ description: 'the API server port written into the Cluster.' })),
  claimName: Type.Optional(Type.String({ description: 'the IPAddressClaim (owned by the Cluster).' })),
  virtualRouterID: Type.Optional(Type.Integer({ minimum: 1, maximum: 255, description: 'the virtual router id in use.' })),
  conditions: Type.Optional(ConditionsSchema),
  observedGeneration: Type.Optional(Type.Integer({ format: 'int64' })),
});
export type ClusterEndpointStatus = Static<typeof ClusterEndpointStatusSchema>;

export type ClusterEndpointTemplate = NetworkObject<'ClusterEndpointTemplate', ClusterEndpointTemplateSpec>;
export type ClusterEndpoint = NetworkObject<'ClusterEndpoint', ClusterEndpointSpec, ClusterEndpointStatus>;

const templateColumns: readonly PrinterColumn[] = [
  { name: 'VXLAN', type: 'integer', jsonPath: '.spec.vxlan' },
  { name: 'Pool', type: 'string', jsonPath: '.spec.addressFromPool.name' },
  { name: 'Port', type: 'integer', jsonPath: '.spec.port' },
];

const endpointColumns: readonly PrinterColumn[] = [
  { name: 'Address', type: 'string', jsonPath: '.status.address' },
  { name: 'Port', type: 'integer', jsonPath: '.status.port' },
  { name: 'VXLAN', type: 'integer', jsonPath: '.spec.vxlan', priority: 1 },
  { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
  { name: 'Reason', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].reason', priority: 1 },
];

export function clusterEndpointCrds(): CrdManifest[] {
  return [
    buildCrd({
      group: NETWORK_GROUP,
      kind: ClusterEndpointTemplateType.kind,
      plural: ClusterEndpointTemplateType.plural,
      singular: 'clusterendpointtemplate',
      shortNames: ['cet'],
      scope: 'Namespaced',
      categories: ['cluster-api', 'metal-l2'],
      // clusterctl move takes every template and ClusterEndpoint (and the latter follows its owner, the Cluster).
      labels: CLUSTERCTL_CRD_LABELS,
      versions: [
        {
          name: NETWORK_VERSION,
          served: true,
          storage: true,
          schema: kindSchema(
            'ClusterEndpointTemplate: a control-plane endpoint on a VLAN, from a pool. A Cluster uses it through the annotation network.metal.x-k8s.io/endpoint-template.',
            ClusterEndpointTemplateSpecSchema,
          ),
          printerColumns: templateColumns,
          hasStatus: false,
        },
      ],
    }),
    buildCrd({
      group: NETWORK_GROUP,
      kind: ClusterEndpointType.kind,
      plural: ClusterEndpointType.plural,
      singular: 'clusterendpoint',
      shortNames: ['cep'],
      scope: 'Namespaced',
      categories: ['cluster-api', 'metal-l2'],
      labels: CLUSTERCTL_CRD_LABELS,
      versions: [
        {
          name: NETWORK_VERSION,
          served: true,
          storage: true,
          schema: kindSchema(
            'ClusterEndpoint: the control-plane endpoint of one Cluster (same name, owned by it): its claim, its address, whether it was written into the Cluster.',
            ClusterEndpointSpecSchema,
            ClusterEndpointStatusSchema,
          ),
          printerColumns: endpointColumns,
          hasStatus: true,
        },
      ],
    }),
  ];
}
