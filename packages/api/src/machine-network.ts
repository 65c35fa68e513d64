import { Type, type Static } from '@sinclair/typebox';
import { PORT_NETWORK_TYPES, portCelRules, type PortNetworkType } from '@metal-l2/metal-api';
import { ConditionsSchema } from './condition.js';
import { CLUSTERCTL_CRD_LABELS, buildCrd, kindSchema, type CrdManifest, type PrinterColumn } from './crd.js';
import type { ObjectMeta, ResourceType } from './object-meta.js';

export const NETWORK_GROUP = 'network.metal.x-k8s.io';
export const NETWORK_VERSION = 'v1alpha1';

export const MachineNetworkTemplateType = {
  group: NETWORK_GROUP,
  version: NETWORK_VERSION,
  kind: 'MachineNetworkTemplate',
  plural: 'machinenetworktemplates',
  namespaced: true,
} as const satisfies ResourceType;

export const MachineNetworkType = {
  group: NETWORK_GROUP,
  version: NETWORK_VERSION,
  kind: 'MachineNetwork',
  plural: 'machinenetworks',
  namespaced: true,
} as const satisfies ResourceType;

export const NetworkAnnotations = {
  /** On a PacketMachineTemplate (or a bare PacketMachine): the MachineNetworkTemplate its machines use. */
  template: 'network.metal.x-k8s.io/template',
  /**
   * On a PacketMachine: the pause beside it is ours (value: when the hold began, RFC 3339). Only a
   * pause carrying this marker is ever removed by the network controller.
   */
  hold: 'network.metal.x-k8s.io/hold',
  /**
   * On a PacketMachine we hold that has no MachineNetwork yet (its template is not found): why it
   * waits, as `<Reason>: <message>`. Removed once the MachineNetwork exists (its conditions say
   * the rest) or the hold ends.
   */
  holdReason: 'network.metal.x-k8s.io/hold-reason',
  /** On a Machine: the hash of the network configuration injected for it; written to wake CAPI ≤ 1.8. */
  networkConfig: 'network.metal.x-k8s.io/network-config',
  /**
   * On a MachineNetwork: the device whose ports were configured, and the VLANs this controller
   * assigned (JSON). Kept in metadata because `clusterctl move` and restores carry no status: the
   * record lets a moved machine stay quiet and still unassign only its own VLANs on deletion.
   */
  portsConfigured: 'network.metal.x-k8s.io/ports-configured',
  assignedVlans: 'network.metal.x-k8s.io/assigned-vlans',
  /**
   * On a MachineNetwork (and on its PacketMachine while a deleted MachineNetwork hands the machine
   * over): its status.userData as JSON, once it has a fingerprint: what the device booted with. Kept
   * in metadata for the same reason: a moved or restored machine injected by another release still
   * says InjectedByOlderRelease, and the endpoint it announces stays known.
   */
  injectedConfig: 'network.metal.x-k8s.io/injected-config',
  /** On a Machine: when it was last woken again because CAPI had not yet adopted the unpaused PacketMachine. */
  wokenAt: 'network.metal.x-k8s.io/woken-at',
  /**
   * On an IPAddressClaim a deleted MachineNetwork left behind because its device could not be
   * checked (a token Metal refuses, no credentials, no PacketCluster): the server may still use
   * the address. JSON `{"machineNetwork","deviceID","credentialsSecret"?}`. The claim has no owner
   * (the garbage collector leaves it); the network controller deletes it, so the address is
   * released, once the device is gone. Deleting the claim releases it at once.
   */
  keptFor: 'network.metal.x-k8s.io/kept-for',
  /** Beside keptFor: why the address is kept and what releases it, for people. */
  keptBecause: 'network.metal.x-k8s.io/kept-because',
} as const;

export const NetworkLabels = {
  /**
   * On a Namespace: its cloned PacketMachines may be linked, so the chart's webhook refuses them
   * while it cannot answer (fail closed); elsewhere only machines that carry the link annotation
   * themselves are refused, and a linked clone admitted while the webhook was down is held by the
   * controller right after (HeldAfterCreation).
   */
  enabled: 'network.metal.x-k8s.io/enabled',
  /**
   * On a Secret: bootstrap data that whoever made it lets the network controller write (its key
   * `value`) under the chart's Secret policy, for a Machine without a bootstrap config.
   */
  bootstrapData: 'network.metal.x-k8s.io/bootstrap-data',
} as const;

export const NetworkFinalizers = {
  /** On a MachineNetwork: claims released and assigned VLANs removed before it may go. */
  machineNetwork: 'network.metal.x-k8s.io/machine-network',
} as const;

export const MachineNetworkConditionTypes = {
  ready: 'Ready',
  addressesAllocated: 'AddressesAllocated',
  userDataInjected: 'UserDataInjected',
  portsConfigured: 'PortsConfigured',
} as const;

/** Reasons of MachineNetwork conditions. PascalCase and never renamed: users alert on them. */
export const MachineNetworkReasons = {
  // AddressesAllocated
  addressesAllocated: 'AddressesAllocated',
  waitingForAddresses: 'WaitingForAddresses',
  poolExhausted: 'PoolExhausted',
  claimConflict: 'ClaimConflict',
  /** The API server refused to create a claim (quota, admission policy, validation); the message has its words. */
  claimRefused: 'ClaimRefused',
  // UserDataInjected
  injected: 'Injected',
  waitingForMachine: 'WaitingForMachine',
  waitingForBootstrapData: 'WaitingForBootstrapData',
  bootstrapSecretNotFound: 'BootstrapSecretNotFound',
  bootstrapSecretNotOwned: 'BootstrapSecretNotOwned',
  /** Ignition of a spec version that cannot be served: spec 1, experimental or unknown versions. */
  ignitionNotSupported: 'IgnitionNotSupported',
  /** Ignition bootstrap data (Flatcar: systemd-networkd) with a template whose os.renderer is not networkd. */
  ignitionNeedsNetworkd: 'IgnitionNeedsNetworkd',
  /**
   * An Ignition (Flatcar) control plane that announces its Cluster's endpoint, and the controller has
   * no --announcer-image: Flatcar has no package manager, keepalived runs from that image.
   */
  announcerImageNotConfigured: 'AnnouncerImageNotConfigured',
  unsupportedFormat: 'UnsupportedFormat',
  provisionedWithoutInjection: 'ProvisionedWithoutInjection',
  /** The injection would take the bootstrap Secret over the API server's 1 MiB limit. */
  bootstrapSecretTooLarge: 'BootstrapSecretTooLarge',
  /** The bootstrap Secret is `immutable: true`: it cannot carry the network configuration. */
  bootstrapSecretImmutable: 'BootstrapSecretImmutable',
  /**
   * The API server refused our write of the bootstrap Secret (the chart's Secret policy: no
   * bootstrap config of an allowed kind owns it; or RBAC); the message has its words.
   */
  bootstrapSecretRefused: 'BootstrapSecretRefused',
  /** The device booted with a configuration other than what the addresses render now (e.g. another address). */
  injectedConfigurationDiffers: 'InjectedConfigurationDiffers',
  /**
   * True: the device booted with user data another release (or other flags, such as --metadata-url)
   * rendered; what the OS was given (addresses, VLANs, routes, announced endpoint) is what it would
   * be given now. Nothing needs doing.
   */
  injectedByOlderRelease: 'InjectedByOlderRelease',
  holdTimeout: 'HoldTimeout',
  /** A control-plane machine of a Cluster with a ClusterEndpointTemplate waits for the endpoint's address. */
  waitingForEndpoint: 'WaitingForEndpoint',
  /** No port of the machine's template carries the ClusterEndpoint's VLAN: the VIP cannot be announced. */
  endpointVlanNotOnMachine: 'EndpointVLANNotOnMachine',
  /** The VIP announcer cannot be rendered for this machine (the message says why). */
  invalidEndpoint: 'InvalidEndpoint',
  // PortsConfigured
  waitingForDevice: 'WaitingForDevice',
  /** CAPP recorded a failure on the PacketMachine (e.g. CreateMachineError). */
  deviceFailed: 'DeviceFailed',
  waitingForBootScript: 'WaitingForBootScript',
  configuringPorts: 'ConfiguringPorts',
  portsConfigured: 'PortsConfigured',
  invalidPortPlan: 'InvalidPortPlan',
  metalAPIError: 'MetalAPIError',
  credentialsMissing: 'CredentialsMissing',
  packetClusterNotFound: 'PacketClusterNotFound',
  bootScriptFailed: 'BootScriptFailed',
  /** A layer-2 mode waited longer than --boot-script-timeout-seconds for the boot script's report. */
  bootScriptTimeout: 'BootScriptTimeout',
  /** A drift check found the ports changed outside the controller in a way it does not repair. */
  portDrift: 'PortDrift',
  /** The configured device is no longer in the Metal API. */
  deviceNotFound: 'DeviceNotFound',
  // Ready and all
  ready: 'Ready',
  templateNotFound: 'TemplateNotFound',
  invalidTemplate: 'InvalidTemplate',
  deleting: 'Deleting',
  paused: 'Paused',
  /** A held machine was cloned from a PacketMachineTemplate that is not found: its link cannot be read. */
  packetMachineTemplateNotFound: 'PacketMachineTemplateNotFound',
} as const;
export type MachineNetworkReason = (typeof MachineNetworkReasons)[keyof typeof MachineNetworkReasons];

export const MachineNetworkEventReasons = {
  claimsCreated: 'ClaimsCreated',
  userDataInjected: 'UserDataInjected',
  pauseReleased: 'PauseReleased',
  portsConfigured: 'PortsConfigured',
  portCall: 'PortCall',
  vlansUnassigned: 'VLANsUnassigned',
  claimsReleased: 'ClaimsReleased',
  /**
   * Deletion went on without checking the VLANs this controller assigned (the message says what
   * was missing); the addresses are kept (the message names them) until the device is gone.
   */
  vlansNotChecked: 'VLANsNotChecked',
  /** On a kept IPAddressClaim: its device is gone, so the claim is deleted and the address released. */
  keptAddressReleased: 'KeptAddressReleased',
  metalAPIError: 'MetalAPIError',
  holdTimeout: 'HoldTimeout',
  injectionRefused: 'InjectionRefused',
  invalidPortPlan: 'InvalidPortPlan',
  nodeStartupTimeoutTooShort: 'NodeStartupTimeoutTooShort',
  injectedConfigurationDiffers: 'InjectedConfigurationDiffers',
  bootScriptTimeout: 'BootScriptTimeout',
  /** Warning: a drift check found a change it reports and does not repair. */
  portDrift: 'PortDrift',
  /** Warning: a drift check found one of the template's VLANs unassigned and assigned it again. */
  portDriftRepaired: 'PortDriftRepaired',
  deviceNotFound: 'DeviceNotFound',
  /** The MachineNetwork was deleted while its PacketMachine lives: the network stays, a new object adopts it. */
  networkKept: 'NetworkKept',
  /** Warning on a PacketMachine: linked, but admitted without our hold (the webhook did not hold it); held by the controller now. */
  heldAfterCreation: 'HeldAfterCreation',
} as const;

/** The renderer that writes the OS configuration; ifupdown is what Equinix's Debian and Ubuntu images use. */
export const RENDERERS = ['ifupdown', 'netplan', 'networkd'] as const;
export type Renderer = (typeof RENDERERS)[number];

const PORT_NAME = '^(bond[0-9]|eth[0-9])$';

export const PoolRefSchema = Type.Object(
  {
    apiGroup: Type.String({ minLength: 1, maxLength: 253, description: 'API group of the pool, e.g. ipam.metal.x-k8s.io.' }),
    kind: Type.String({ minLength: 1, maxLength: 63, description: 'kind of the pool, e.g. InClusterIPPool or GlobalInClusterIPPool.' }),
    name: Type.String({ minLength: 1, maxLength: 253, description: 'name of the pool (in the machine namespace for namespaced kinds).' }),
  },
  { description: 'a pool an IPAddressClaim is made against (one claim, so one address, per entry).' },
);
export type NetworkPoolRef = Static<typeof PoolRefSchema>;

export const RouteSchema = Type.Object(
  {
    to: Type.String({
      maxLength: 43,
      'x-kubernetes-validations': [{ rule: "self == 'default' || isCIDR(self)", message: "must be a CIDR or 'default'" }],
      description: "destination: a CIDR, or 'default' for a default route.",
    }),
    via: Type.String({
      maxLength: 39,
      'x-kubernetes-validations': [{ rule: 'isIP(self)', message: 'must be an IP address' }],
      description: 'next hop.',
    }),
    metric: Type.Optional(Type.Integer({ minimum: 0, maximum: 4294967295, format: 'int64' })),
  },
  {
    'x-kubernetes-validations': [
      {
        rule: "self.to == 'default' || cidr(self.to).ip().family() == ip(self.via).family()",
        message: 'the destination and the next hop must be of the same address family',
      },
    ],
  },
);
export type Route = Static<typeof RouteSchema>;

export const VlanSchema = Type.Object({
  vxlan: Type.Integer({
    minimum: 2,
    maximum: 3999,
    description: 'vxlan id of the VLAN (as the Metal API names it), in the machine metro.',
  }),
  native: Type.Optional(
    Type.Boolean({ description: 'carry this VLAN untagged (layer-2 ports and unbonded eth ports only); at most one per port.' }),
  ),
  addressesFromPools: Type.Optional(
    Type.Array(PoolRefSchema, {
      maxItems: 8,
      description: 'one IPAddressClaim per entry; a pool listed twice gives two addresses; IPv4 and IPv6 may mix.',
    }),
  ),
  routes: Type.Optional(Type.Array(RouteSchema, { maxItems: 32 })),
  mtu: Type.Optional(
    Type.Integer({
      minimum: 1280,
      maximum: 9000,
      description:
        'MTU of the VLAN interface (1280-9000). Its parent (the bond, whose slaves follow it, or a NIC out of the bond) is raised to the largest MTU of its VLANs, never lowered.',
    }),
  ),
  nameservers: Type.Optional(
    Type.Object({
      addresses: Type.Optional(
        Type.Array(Type.String({ maxLength: 39, 'x-kubernetes-validations': [{ rule: 'isIP(self)', message: 'must be an IP address' }] }), {
          maxItems: 4,
        }),
      ),
      search: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 253 }), { maxItems: 6 })),
    }),
  ),
});
export type Vlan = Static<typeof VlanSchema>;

export const PortSchema = Type.Object(
  {
    name: Type.String({ pattern: PORT_NAME, description: 'the Metal port name: bond0, bond1, eth0, eth1, ...' }),
    bonded: Type.Optional(
      Type.Boolean({
        description:
          'bond ports: whether the bond stays up (false = layer2-individual). eth ports: whether the port stays in its bond (false on eth1 = hybrid). Defaults: true for bonds; an eth port follows its bond.',
      }),
    ),
    layer2: Type.Optional(
      Type.Boolean({ description: 'bond ports only: layer 2 (the bond loses its public layer-3 addresses). Default false.' }),
    ),
    vlans: Type.Optional(
      Type.Array(VlanSchema, {
        maxItems: 16,
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['vxlan'],
        'x-kubernetes-validations': [
          { rule: 'self.filter(v, has(v.native) && v.native).size() <= 1', message: 'at most one VLAN per port may be native' },
          // What a port may be is decided in one place, metal-api's port rules: the CRD checks
          // the part one port can say, in the same words the webhook and the planner use.
          ...portCelRules('vlans'),
        ],
      }),
    ),
  },
  { 'x-kubernetes-validations': portCelRules('port') },
);
export type Port = Static<typeof PortSchema>;

export const NetworkSpecFields = {
  ports: Type.Array(PortSchema, {
    minItems: 1,
    maxItems: 8,
    'x-kubernetes-list-type': 'map',
    'x-kubernetes-list-map-keys': ['name'],
    description: 'the ports as they should end up, named as the Metal API names them; ports not listed keep their defaults.',
  }),
  os: Type.Optional(
    Type.Object({
      renderer: Type.Optional(
        Type.Unsafe<Renderer>({
          type: 'string',
          enum: [...RENDERERS],
          default: 'ifupdown',
          description: 'how the OS network configuration is written.',
        }),
      ),
    }),
  ),
  credentialsSecretRef: Type.Optional(
    Type.Object(
      { name: Type.String({ minLength: 1, maxLength: 253 }) },
      {
        description:
          "Secret in this namespace with the Metal API token under the key apiToken; default: the controller's --metal-credentials-secret.",
      },
    ),
  ),
};

const IMMUTABLE = {
  rule: 'self == oldSelf',
  message: 'spec is immutable: create a new MachineNetworkTemplate and roll the machines out, as with Cluster API templates',
};

export const MachineNetworkTemplateSpecSchema = Type.Object(NetworkSpecFields, { 'x-kubernetes-validations': [IMMUTABLE] });
export type MachineNetworkTemplateSpec = Static<typeof MachineNetworkTemplateSpecSchema>;

export const MachineNetworkSpecSchema = Type.Object(
  {
    templateName: Type.String({ minLength: 1, maxLength: 253, description: 'the MachineNetworkTemplate this spec was copied from.' }),
    ...NetworkSpecFields,
  },
  { 'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'spec is a snapshot of the template and is immutable' }] },
);
export type MachineNetworkSpec = Static<typeof MachineNetworkSpecSchema>;

/** The network types, named as the Metal API names them: its enum is the one list. */
export const NETWORK_TYPES = PORT_NETWORK_TYPES;
export type NetworkMode = PortNetworkType;

export const ClaimRecordSchema = Type.Object({
  name: Type.String({ description: 'the IPAddressClaim (owned by this MachineNetwork).' }),
  port: Type.String(),
  vxlan: Type.Integer(),
  poolRef: PoolRefSchema,
});
export type ClaimRecord = Static<typeof ClaimRecordSchema>;

export const AddressRecordSchema = Type.Object({
  port: Type.String(),
  vxlan: Type.Integer(),
  address: Type.String(),
  prefix: Type.Integer(),
  gateway: Type.Optional(Type.String()),
  claimName: Type.String(),
});
export type AddressRecord = Static<typeof AddressRecordSchema>;

/** The Cluster endpoint (VIP) a control plane's user data announces: what its keepalived was given at boot. */
export const AnnouncedEndpointSchema = Type.Object(
  {
    address: Type.String(),
    prefix: Type.Integer(),
    port: Type.Integer(),
    vxlan: Type.Integer(),
    virtualRouterID: Type.Integer(),
  },
  {
    description:
      "the Cluster endpoint (VIP) this machine's injected user data announces with keepalived; absent when it announces none. The Cluster's endpoint claim is kept while a machine announces its address.",
  },
);
export type AnnouncedEndpoint = Static<typeof AnnouncedEndpointSchema>;

export const ObservedPortSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  networkType: Type.Optional(Type.String()),
  bonded: Type.Boolean(),
  vlans: Type.Optional(Type.Array(Type.Integer())),
  nativeVlan: Type.Optional(Type.Integer()),
});
export type ObservedPortRecord = Static<typeof ObservedPortSchema>;

export const AssignedVlanSchema = Type.Object({
  portID: Type.String(),
  port: Type.String(),
  vxlan: Type.Integer(),
  vlanID: Type.String(),
});
export type AssignedVlan = Static<typeof AssignedVlanSchema>;

export const PendingBatchSchema = Type.Object(
  {
    portID: Type.String(),
    port: Type.String(),
    batchID: Type.String(),
    final: Type.Boolean({ description: 'the last call of the port plan: its completion means the ports match.' }),
  },
  { description: 'a VLAN assignment batch this controller started and has not yet seen finish.' },
);
export type PendingBatch = Static<typeof PendingBatchSchema>;

export const MachineNetworkStatusSchema = Type.Object({
  networkType: Type.Optional(
    Type.Unsafe<NetworkMode>({ type: 'string', enum: [...NETWORK_TYPES], description: 'derived from spec.ports.' }),
  ),
  projectID: Type.Optional(Type.String({ description: 'the Metal project, from the PacketCluster.' })),
  deviceID: Type.Optional(Type.String()),
  claims: Type.Optional(
    Type.Array(ClaimRecordSchema, { maxItems: 128, description: 'every claim this machine made; released from this record.' }),
  ),
  addresses: Type.Optional(Type.Array(AddressRecordSchema, { maxItems: 128 })),
  userData: Type.Optional(
    Type.Object({
      secretName: Type.Optional(Type.String()),
      hash: Type.Optional(
        Type.String({
          description: "sha256 of the injected cloud-config part (our bytes, as the bootstrap data's X-Metal-L2 marker says).",
        }),
      ),
      rendererVersion: Type.Optional(
        Type.Integer({
          minimum: 1,
          description:
            'the version of the rendering that injected it (a release bumps it when its rendering changes); absent: injected by a release before versions were recorded.',
        }),
      ),
      fingerprint: Type.Optional(
        Type.String({
          description:
            'sha256 of what the OS was given that matters (port modes, VLANs, addresses, routes, MTU, nameservers, the announced endpoint), not of our bytes: a release that only renders differently keeps it. Filled in for machines injected before it was recorded.',
        }),
      ),
      announcedEndpoint: Type.Optional(AnnouncedEndpointSchema),
    }),
  ),
  ports: Type.Optional(
    Type.Array(ObservedPortSchema, { maxItems: 16, description: "the device's ports as last read from the Metal API." }),
  ),
  assignedVlans: Type.Optional(
    Type.Array(AssignedVlanSchema, { maxItems: 64, description: 'VLANs this controller assigned; the only ones it unassigns.' }),
  ),
  pendingBatch: Type.Optional(PendingBatchSchema),
  bootScript: Type.Optional(
    Type.Object(
      { state: Type.String(), code: Type.Integer(), message: Type.String() },
      { description: "the boot script's last user-state event, as the Metal API reported it." },
    ),
  ),
  bootScriptWaitingSince: Type.Optional(
    Type.String({
      format: 'date-time',
      description: 'when the controller began waiting for the boot script (layer-2 modes), for --boot-script-timeout-seconds.',
    }),
  ),
  conditions: Type.Optional(ConditionsSchema),
  observedGeneration: Type.Optional(Type.Integer({ format: 'int64' })),
});
export type MachineNetworkStatus = Static<typeof MachineNetworkStatusSchema>;

/** An object of one of the network.metal.x-k8s.io kinds; templates have no status. */
export interface NetworkObject<Kind extends string, Spec, Status = never> {
  apiVersion: `${typeof NETWORK_GROUP}/${typeof NETWORK_VERSION}`;
  kind: Kind;
  metadata: ObjectMeta;
  spec: Spec;
  status?: Status;
}

export type MachineNetworkTemplate = NetworkObject<'MachineNetworkTemplate', MachineNetworkTemplateSpec>;
export type MachineNetwork = NetworkObject<'MachineNetwork', MachineNetworkSpec, MachineNetworkStatus>;

const templateColumns: readonly PrinterColumn[] = [
  { name: 'Ports', type: 'string', jsonPath: '.spec.ports[*].name' },
  { name: 'Renderer', type: 'string', jsonPath: '.spec.os.renderer' },
];

const machineNetworkColumns: readonly PrinterColumn[] = [
  { name: 'Type', type: 'string', jsonPath: '.status.networkType', description: 'network type derived from the ports' },
  { name: 'Addresses', type: 'string', jsonPath: '.status.addresses[*].address' },
  { name: 'Device', type: 'string', jsonPath: '.status.deviceID', priority: 1 },
  { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
  { name: 'Reason', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].reason' },
];

export function machineNetworkCrds(): CrdManifest[] {
  return [
    buildCrd({
      group: NETWORK_GROUP,
      kind: MachineNetworkTemplateType.kind,
      plural: MachineNetworkTemplateType.plural,
      singular: 'machinenetworktemplate',
      shortNames: ['mnt'],
      scope: 'Namespaced',
      categories: ['cluster-api', 'metal-l2'],
      labels: CLUSTERCTL_CRD_LABELS,
      versions: [
        {
          name: NETWORK_VERSION,
          served: true,
          storage: true,
          schema: kindSchema(
            'MachineNetworkTemplate: how the ports of the machines that use it should look.',
            MachineNetworkTemplateSpecSchema,
          ),
          printerColumns: templateColumns,
          hasStatus: false,
        },
      ],
    }),
    buildCrd({
      group: NETWORK_GROUP,
      kind: MachineNetworkType.kind,
      plural: MachineNetworkType.plural,
      singular: 'machinenetwork',
      shortNames: ['mn'],
      scope: 'Namespaced',
      categories: ['cluster-api', 'metal-l2'],
      labels: CLUSTERCTL_CRD_LABELS,
      versions: [
        {
          name: NETWORK_VERSION,
          served: true,
          storage: true,
          schema: kindSchema(
            'MachineNetwork: the network of one PacketMachine (same name, owned by it): addresses, injected configuration, ports.',
            MachineNetworkSpecSchema,
            MachineNetworkStatusSchema,
          ),
          printerColumns: machineNetworkColumns,
          hasStatus: true,
        },
      ],
    }),
  ];
}
