/**
 * The URL paths the network controller's webhook server answers, as the chart's
 * MutatingWebhookConfiguration and ValidatingWebhookConfiguration name them (controller-runtime's
 * naming: verb, group with dots as dashes, version, lower-case kind).
 */
export const NetworkWebhookPaths = {
  /** Mutating, PacketMachine CREATE: pauses machines linked to a MachineNetworkTemplate. */
  packetMachine: '/mutate-infrastructure-cluster-x-k8s-io-v1beta1-packetmachine',
  /** Mutating, Cluster CREATE (any served version): holds Clusters linked to a ClusterEndpointTemplate. */
  cluster: '/mutate-cluster-x-k8s-io-cluster',
  /** Validating, MachineNetworkTemplate CREATE and UPDATE: the cross-port rules CEL cannot express. */
  machineNetworkTemplate: '/validate-network-metal-x-k8s-io-v1alpha1-machinenetworktemplate',
} as const;
