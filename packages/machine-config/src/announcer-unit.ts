// The control-plane endpoint announcer on machines without a package manager (Ignition: Flatcar,
// which has no apt-get and no keepalived): keepalived from the metal-l2 image, which carries it
// (hack/build-image.js), run by containerd's `ctr` in the host's network namespace. Flatcar ships
// containerd; CAPP's own kube-vip template runs `ctr image pull` / `ctr run --net-host` on the host
// at boot the same way. A systemd unit rather than a static pod: kubeadm init's preflight refuses a
// non-empty /etc/kubernetes/manifests unless the user's KubeadmControlPlane ignores DirAvailable, and
// kubelet could not start a pod before kubeadm anyway. The files keepalived reads are the same as on
// cloud-config machines (keepalived.ts), written with OS interface names by the boot script's unit.
import { APISERVER_CHECK_PATH, ENDPOINT_STATE_PATH, KEEPALIVED_CONF_PATH, NOTIFY_SCRIPT_PATH } from './keepalived.js';

/** The unit that runs keepalived; enabled, so it runs on every boot (the boot script's unit runs once). */
export const ENDPOINT_UNIT = 'metal-l2-endpoint.service';
/** containerd namespace of the image and container: not kubelet's `k8s.io`, whose image GC would remove the image. */
export const ANNOUNCER_CTR_NAMESPACE = 'metal-l2';
export const ANNOUNCER_CONTAINER = 'metal-l2-endpoint';
/** keepalived in the image (Debian's package). */
export const IMAGE_KEEPALIVED = '/usr/sbin/keepalived';
/** Where Flatcar has containerd's client. */
const CTR = '/usr/bin/ctr';

const STATE_DIR = ENDPOINT_STATE_PATH.slice(0, ENDPOINT_STATE_PATH.lastIndexOf('/'));

// A name component of an image path (lower case, separated by '.', '_', '__' or dashes).
const COMPONENT = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*';
const IMAGE_REFERENCE = new RegExp(
  `^(?:(?<domain>[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?(?::[0-9]+)?)/)?${COMPONENT}(?:/${COMPONENT})*` +
    '(?::(?<tag>[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}))?(?:@(?<digest>sha256:[0-9a-f]{64}))?$',
);

/**
 * Why `image` cannot be the announcer's image, or undefined when it can. `ctr` does not complete
 * short names (`metal-l2:0.1`, `org/metal-l2:0.1`) as Docker does, and pulls nothing without a tag
 * or digest, so the reference must name its registry and a tag or digest. It goes into a unit file's
 * command line, which this form keeps free of spaces, quotes and systemd's `%` specifiers.
 */
export function announcerImageIssue(image: string): string | undefined {
  const m = IMAGE_REFERENCE.exec(image);
  const shown = JSON.stringify(image.slice(0, 300));
  if (m === null) return `${shown} is not an image reference of the form registry/path:tag or registry/path@sha256:<digest>`;
  const domain = m.groups?.['domain'] ?? '';
  if (!domain.includes('.') && !domain.includes(':') && domain !== 'localhost') {
    return `${shown} does not name its registry (containerd's ctr, which pulls it on the machine, does not complete short names): write e.g. docker.io/${image}`;
  }
  if (m.groups?.['tag'] === undefined && m.groups?.['digest'] === undefined) return `${shown} has no tag or digest`;
  return undefined;
}

/** The `ctr` command line, with containerd's namespace. */
const ctr = (...args: string[]): string => [CTR, '--namespace', ANNOUNCER_CTR_NAMESPACE, ...args].join(' ');

/**
 * The unit (systemd) running keepalived from `image`. Ordered after the boot script's unit, which
 * writes /etc/keepalived with the OS interface names, and before kubeadm, which requires it (kubeadm
 * init and join need the VIP): a pull that fails is retried every 5 s without end while kubeadm
 * waits, since restarting a unit keeps its start job pending. keepalived gets the host's network
 * namespace and only NET_ADMIN (addresses) and NET_RAW (VRRP's raw socket) beyond containerd's
 * defaults; root in the container (`--user`, which ctr has since containerd 1.7), since the image's
 * user is the controllers' 65532. The announcer's three files in /etc/keepalived read-only, each on
 * its own: the directory would hide the image's /etc/keepalived/keepalived.config-opts, without which
 * Debian's keepalived 2.3 exits 1 at once (test/image/image.test.ts runs these lines under containerd
 * 2.0 and 1.7). A file's mount holds the file as it was at start: the boot script writes them before
 * this unit starts. /run/metal-l2 for the notify script's state file. A container left by a killed `ctr`
 * (not removed by --rm) is removed before the next start.
 */
export function renderEndpointUnit(image: string, order: { after: string; before: string }): string {
  const issue = announcerImageIssue(image);
  if (issue !== undefined) throw new Error(`announcer image ${issue}`);
  const mounts = [
    ...[KEEPALIVED_CONF_PATH, APISERVER_CHECK_PATH, NOTIFY_SCRIPT_PATH].map((f) => `src=${f},dst=${f},options=rbind:ro`),
    `src=${STATE_DIR},dst=${STATE_DIR},options=rbind:rw`,
  ];
  const run = [
    'run',
    '--rm',
    '--net-host',
    '--user',
    '0:0',
    '--cap-add',
    'CAP_NET_ADMIN',
    '--cap-add',
    'CAP_NET_RAW',
    ...mounts.flatMap((m) => ['--mount', `type=bind,${m}`]),
    image,
    ANNOUNCER_CONTAINER,
    IMAGE_KEEPALIVED,
    '--dont-fork',
    '--log-console',
    '--vrrp',
    `--use-file=${KEEPALIVED_CONF_PATH}`,
  ];
  return [
    '[Unit]',
    "Description=metal-l2: this control plane's endpoint announcer (keepalived, VRRP) from the metal-l2 image",
    'Wants=network-online.target',
    `Requires=containerd.service ${order.after}`,
    `After=network-online.target containerd.service ${order.after}`,
    `Before=${order.before}`,
    `ConditionPathExists=${KEEPALIVED_CONF_PATH}`,
    'StartLimitIntervalSec=0',
    '',
    '[Service]',
    'Restart=always',
    'RestartSec=5',
    `ExecStartPre=/usr/bin/mkdir -p ${STATE_DIR}`,
    `ExecStartPre=${ctr('image', 'pull', image)}`,
    `ExecStartPre=-${ctr('task', 'rm', '--force', ANNOUNCER_CONTAINER)}`,
    `ExecStartPre=-${ctr('container', 'rm', ANNOUNCER_CONTAINER)}`,
    `ExecStart=${ctr(...run)}`,
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    `RequiredBy=${order.before}`,
    '',
  ].join('\n');
}
