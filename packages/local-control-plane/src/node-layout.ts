import { join } from 'node:path';

/**
 * Where one node keeps everything it writes, and the host-wide names it takes. Every path is under
 * `<stateDir>/node` so that teardown can find each mount by its prefix; the bridge, the cgroup
 * root and the CNI network name are the only names outside it, and they are fixed, so one node
 * runs on a machine at a time (a second start stops the first).
 */
export interface NodeLayout {
  readonly dir: string;
  readonly nodeName: string;
  readonly bridge: string;
  /** The pods' subnet on the bridge; the host holds its first address. */
  readonly podCidr: string;
  readonly hostAddress: string;
  readonly serviceCidr: string;
  readonly cniNetwork: string;
  /** Under every cgroup v1 hierarchy: the kubelet's cgroupRoot. */
  readonly cgroupRoot: string;
  readonly containerdRoot: string;
  readonly containerdState: string;
  readonly containerdSocket: string;
  readonly containerdConfig: string;
  readonly cniConfDir: string;
  readonly cniIpamDir: string;
  readonly kubeletRoot: string;
  readonly kubeletConfig: string;
  readonly podLogsDir: string;
  readonly kubeProxyConfig: string;
  readonly pki: string;
  readonly stateFile: string;
}

export const NODE_NAME = 'metal-l2-node';

export function nodeLayout(stateDir: string): NodeLayout {
  const dir = join(stateDir, 'node');
  return {
    dir,
    nodeName: NODE_NAME,
    bridge: 'ml2node0',
    podCidr: '10.213.0.0/24',
    hostAddress: '10.213.0.1',
    serviceCidr: '10.96.213.0/24',
    cniNetwork: 'metal-l2-node',
    cgroupRoot: 'metal-l2-node',
    containerdRoot: join(dir, 'containerd', 'root'),
    containerdState: join(dir, 'containerd', 'state'),
    containerdSocket: join(dir, 'containerd', 'containerd.sock'),
    containerdConfig: join(dir, 'containerd', 'config.toml'),
    cniConfDir: join(dir, 'cni', 'net.d'),
    cniIpamDir: join(dir, 'cni', 'ipam'),
    kubeletRoot: join(dir, 'kubelet'),
    kubeletConfig: join(dir, 'kubelet-config.yaml'),
    podLogsDir: join(dir, 'pod-logs'),
    kubeProxyConfig: join(dir, 'kube-proxy-config.yaml'),
    pki: join(dir, 'pki'),
    stateFile: join(dir, 'node.json'),
  };
}
