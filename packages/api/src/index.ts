export { apiVersionOf } from './object-meta.js';
export type { KubeObject, ObjectMeta, OwnerReference, ResourceType } from './object-meta.js';
export { ConditionSchema, ConditionsSchema } from './condition.js';
export type { Condition, ConditionStatus } from './condition.js';
export { CLUSTERCTL_CRD_LABELS, buildCrd } from './crd.js';
export type { CrdManifest, CrdSource, PrinterColumn } from './crd.js';
export {
  IPAM_GROUP,
  IPAM_VERSION,
  InClusterIPPoolType,
  GlobalInClusterIPPoolType,
  poolTypes,
  IpamFinalizers,
  IpamAnnotations,
  PoolConditionTypes,
  PoolReasons,
  PoolEventReasons,
  PoolSpecSchema,
  PoolStatusSchema,
  VrfSpecSchema,
  VrfResourceKinds,
  poolCrds,
} from './ipam-pool.js';
export type { InClusterIPPool, IPPool, PoolKind, PoolSpec, PoolStatus, PoolVrfStatus, VrfResourceKind, VrfSpec } from './ipam-pool.js';
export { IPAddressBlockType, IpamLabels, BlockSpecSchema, BlockStatusSchema, blockCrds } from './ipam-block.js';
export type { IPAddressBlock, BlockSpec, BlockStatus } from './ipam-block.js';
export {
  CAPI_IPAM_GROUP,
  CAPI_IPAM_VERSIONS,
  CAPI_CORE_GROUP,
  CAPI_CORE_VERSIONS,
  ipAddressClaimType,
  ipAddressType,
  clusterType,
  machineType,
  machineHealthCheckType,
  CapiLabels,
  CapiAnnotations,
  CapiClonedAnnotations,
  ClaimReasons,
  BOOTSTRAP_SECRET_TYPE,
} from './capi.js';
export type {
  CapiIpamVersion,
  CapiCoreVersion,
  ClaimReason,
  IPAddressClaim,
  IPAddress,
  Cluster,
  ContractReference,
  Machine,
  MachineHealthCheck,
  PoolReference,
  V1Beta1Condition,
} from './capi.js';
export {
  CAPP_GROUP,
  CAPP_VERSION,
  PacketMachineType,
  PacketMachineTemplateType,
  PacketClusterType,
  PROVIDER_ID_PREFIX,
  deviceIdOf,
} from './capp.js';
export type { PacketMachine, PacketMachineSpec, PacketMachineTemplate, PacketCluster } from './capp.js';
export {
  NETWORK_GROUP,
  NETWORK_VERSION,
  MachineNetworkTemplateType,
  MachineNetworkType,
  NetworkAnnotations,
  NetworkLabels,
  NetworkFinalizers,
  MachineNetworkConditionTypes,
  MachineNetworkReasons,
  MachineNetworkEventReasons,
  RENDERERS,
  NETWORK_TYPES,
  MachineNetworkTemplateSpecSchema,
  MachineNetworkSpecSchema,
  MachineNetworkStatusSchema,
  machineNetworkCrds,
} from './machine-network.js';
export type {
  MachineNetwork,
  MachineNetworkTemplate,
  MachineNetworkSpec,
  MachineNetworkTemplateSpec,
  MachineNetworkStatus,
  NetworkMode,
  MachineNetworkReason,
  NetworkPoolRef,
  Port,
  Vlan,
  Route,
  Renderer,
  ClaimRecord,
  AddressRecord,
  AnnouncedEndpoint,
  ObservedPortRecord,
  AssignedVlan,
  PendingBatch,
} from './machine-network.js';
export {
  ClusterEndpointTemplateType,
  ClusterEndpointType,
  ClusterEndpointAnnotations,
  ClusterEndpointFinalizers,
  ClusterEndpointConditionTypes,
  ClusterEndpointReasons,
  ClusterEndpointEventReasons,
  ClusterEndpointTemplateSpecSchema,
  ClusterEndpointSpecSchema,
  ClusterEndpointStatusSchema,
  DEFAULT_ENDPOINT_PORT,
  CLUSTER_ENDPOINT_LABEL,
  clusterEndpointCrds,
} from './cluster-endpoint.js';
export type {
  ClusterEndpoint,
  ClusterEndpointTemplate,
  ClusterEndpointSpec,
  ClusterEndpointTemplateSpec,
  ClusterEndpointStatus,
  ClusterEndpointReason,
} from './cluster-endpoint.js';
export { allCrds } from './all-crds.js';
