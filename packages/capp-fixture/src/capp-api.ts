// The names CAPP v0.9.0 and CAPI v1.7 use on the objects the fixture writes. Spelled as the
// upstream constants are (api/v1beta1/packetmachine_types.go, tags.go, pkg/cloud/packet/util.go,
// scope/machine.go; CAPI errors/consts.go); users and the network controller read them.

/** CAPP's finalizer on a PacketMachine (infrav1.MachineFinalizer). */
export const PACKET_MACHINE_FINALIZER = 'packetmachine.infrastructure.cluster.x-k8s.io';

/** Condition types on a PacketMachine (CAPI v1beta1 conditions, with severity). */
export const PacketMachineConditionTypes = {
  /** infrav1.DeviceReadyCondition: its value really is "InstanceReady". */
  deviceReady: 'InstanceReady',
  /** clusterv1.ReadyCondition, the summary. */
  ready: 'Ready',
} as const;

/** Reasons of the InstanceReady condition (infrav1 *Reason constants). */
export const PacketMachineReasons = {
  instanceNotFound: 'InstanceNotFound',
  instanceProvisionStarted: 'InstanceProvisionStarted',
  instanceProvisionFailed: 'InstanceProvisionFailed',
  waitingForClusterInfrastructure: 'WaitingForClusterInfrastructure',
  waitingForBootstrapData: 'WaitingForBootstrapData',
} as const;

/** CAPI's MachineStatusError values that CAPP sets as status.failureReason. */
export const MachineFailureReasons = {
  createMachineError: 'CreateMachineError',
  updateMachineError: 'UpdateMachineError',
} as const;

/** Device states CAPP distinguishes (infrav1.PacketResourceStatus*). */
export const PendingDeviceStates: readonly string[] = ['new', 'queued', 'provisioning'];
export const ACTIVE_DEVICE_STATE = 'active';

/** Role tags CAPP adds to every device it creates (infrav1.ControlPlaneTag / WorkerTag). */
export const RoleTags = {
  controlPlane: 'kubernetes.io/role:master',
  worker: 'kubernetes.io/role:node',
} as const;

/** CAPP's PacketCluster.spec.vipManager values. */
export const VipManagers = { cpem: 'CPEM', kubeVip: 'KUBE_VIP', emlb: 'EMLB' } as const;

/** The PacketCluster annotation EMLB keeps its load balancer id in. */
export const EMLB_ID_ANNOTATION = 'equinix.com/loadbalancerID';

/** The operating system CAPP requires with an iPXE URL. */
export const IPXE_OS = 'custom_ipxe';

/** Labels Cluster API puts on Machines (and, in v1.7, copies onto infrastructure machines). */
export const CapiMachineLabels = {
  clusterName: 'cluster.x-k8s.io/cluster-name',
  controlPlane: 'cluster.x-k8s.io/control-plane',
} as const;

/** How long the v1.7 Machine controller waits before looking again for a missing infra machine. */
export const EXTERNAL_READY_WAIT_MS = 30_000;

/**
 * The fixture's PacketMachine and Machine workers: CAPP v0.9.0's and CAPI v1.7's defaults
 * (`--packetmachine-concurrency`, `--machine-concurrency`). CAPP has no 429 handling (a refused
 * createDevice is a terminal CreateMachineError), so tests that limit Metal's rate limit the
 * network controller's own API token, never CAPP's.
 */
export const CAPP_MACHINE_WORKERS = 10;
export const CAPI_MACHINE_WORKERS = 10;

/** CAPP's requeue while a device is queued or provisioning. */
export const CAPP_DEVICE_POLL_MS = 10_000;
