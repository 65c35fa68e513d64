import { stringify } from 'yaml';
import type { NodeLayout } from './node-layout.js';

export const SANDBOX_IMAGE = 'metal-l2.local/pause:1';

/**
 * containerd 1.6 with everything under the node's directory (netns mounts included), cgroupfs, and
 * `restrict_oom_score_adj`: this VM refuses a negative oom_score_adj and runc then fails with
 * "can't get final child's PID from pipe".
 */
export function renderContainerdConfig(layout: NodeLayout): string {
  const cri = 'plugins."io.containerd.grpc.v1.cri"';
  return [
    'version = 2',
    `root = ${JSON.stringify(layout.containerdRoot)}`,
    `state = ${JSON.stringify(layout.containerdState)}`,
    '[grpc]',
    `  address = ${JSON.stringify(layout.containerdSocket)}`,
    '[metrics]',
    '  address = ""',
    `[${cri}]`,
    `  sandbox_image = ${JSON.stringify(SANDBOX_IMAGE)}`,
    '  restrict_oom_score_adj = true',
    '  netns_mounts_under_state_dir = true',
    '  stream_server_address = "127.0.0.1"',
    '  stream_server_port = "0"',
    '  enable_selinux = false',
    `[${cri}.containerd]`,
    '  snapshotter = "overlayfs"',
    '  default_runtime_name = "runc"',
    `[${cri}.containerd.runtimes.runc]`,
    '  runtime_type = "io.containerd.runc.v2"',
    `[${cri}.containerd.runtimes.runc.options]`,
    '  SystemdCgroup = false',
    `  Root = ${JSON.stringify(`${layout.containerdState}/runc`)}`,
    `[${cri}.cni]`,
    '  bin_dir = "/usr/lib/cni"',
    `  conf_dir = ${JSON.stringify(layout.cniConfDir)}`,
    '  max_conf_num = 1',
    '[plugins."io.containerd.internal.v1.opt"]',
    `  path = ${JSON.stringify(`${layout.dir}/containerd/opt`)}`,
    '',
  ].join('\n');
}

/**
 * The bridge plugin on the bridge node.ts made (it holds the host address already), host-local
 * addresses kept under the node's directory, no masquerading (pods only talk to this host).
 */
export function renderCniConfig(layout: NodeLayout): string {
  return `${JSON.stringify(
    {
      cniVersion: '0.4.0',
      name: layout.cniNetwork,
      plugins: [
        {
          type: 'bridge',
          bridge: layout.bridge,
          isGateway: true,
          ipMasq: false,
          hairpinMode: true,
          ipam: {
            type: 'host-local',
            ranges: [[{ subnet: layout.podCidr, gateway: layout.hostAddress }]],
            // Through the host for everything: Service addresses are DNATed there (kube-proxy).
            routes: [{ dst: '0.0.0.0/0' }],
            dataDir: layout.cniIpamDir,
          },
        },
      ],
    },
    null,
    2,
  )}\n`;
}

export interface KubeletPorts {
  readonly port: number;
  readonly healthzPort: number;
}

/**
 * Webhook authentication and authorization as on a real node (the API server's client certificate
 * for logs and exec, TokenReview and SubjectAccessReview for everyone else), cgroupfs under the
 * node's own cgroup root, and eviction thresholds low enough that a busy shared disk does not
 * taint the node.
 */
export function renderKubeletConfig(layout: NodeLayout, ports: KubeletPorts, clientCaFile: string): string {
  return stringify({
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    address: layout.hostAddress,
    port: ports.port,
    readOnlyPort: 0,
    healthzBindAddress: '127.0.0.1',
    healthzPort: ports.healthzPort,
    authentication: { anonymous: { enabled: false }, webhook: { enabled: true }, x509: { clientCAFile: clientCaFile } },
    authorization: { mode: 'Webhook' },
    cgroupDriver: 'cgroupfs',
    // This machine has cgroup v1 only; 1.34 still runs there when told to.
    failCgroupV1: false,
    cgroupRoot: `/${layout.cgroupRoot}`,
    failSwapOn: false,
    containerRuntimeEndpoint: `unix://${layout.containerdSocket}`,
    podLogsDir: layout.podLogsDir,
    resolvConf: '/etc/resolv.conf',
    evictionHard: { 'memory.available': '100Mi', 'nodefs.available': '1%', 'nodefs.inodesFree': '1%', 'imagefs.available': '1%' },
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    serializeImagePulls: false,
    maxPods: 50,
    nodeStatusUpdateFrequency: '5s',
    syncFrequency: '10s',
    shutdownGracePeriod: '0s',
    registerNode: true,
  });
}

/**
 * iptables mode, masquerading everything sent to a Service so that replies come back through the
 * host even between two pods on the bridge; no sysctl or conntrack table changes on the host.
 */
export function renderKubeProxyConfig(
  layout: NodeLayout,
  kubeconfig: string,
  ports: { readonly healthz: number; readonly metrics: number },
): string {
  return stringify({
    apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
    kind: 'KubeProxyConfiguration',
    clientConnection: { kubeconfig },
    mode: 'iptables',
    clusterCIDR: layout.podCidr,
    hostnameOverride: layout.nodeName,
    healthzBindAddress: `127.0.0.1:${ports.healthz}`,
    metricsBindAddress: `127.0.0.1:${ports.metrics}`,
    nodePortAddresses: [`${layout.hostAddress}/32`],
    iptables: { masqueradeAll: true, localhostNodePorts: false },
    conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: '0s', tcpCloseWaitTimeout: '0s' },
  });
}
