// The text of the endpoint announcer's files: keepalived's configuration (one VRRP instance holding
// the control-plane VIP on the VLAN interface) and the health check it tracks. The interface name is
// a port placeholder (`@port:bond0@.1000`) that the boot script replaces with the OS name, as it does
// in the network files. Nothing here contains `{{`, `{%` or `{#` (Go templates, Jinja), though the
// files travel base64 in the injected part anyway.

export const KEEPALIVED_CONF_PATH = '/etc/keepalived/keepalived.conf';
export const APISERVER_CHECK_PATH = '/etc/keepalived/metal-l2-apiserver-check';
export const NOTIFY_SCRIPT_PATH = '/etc/keepalived/metal-l2-notify';
/** The instance's last state as keepalived reported it (MASTER, BACKUP, FAULT, STOP), one word and a newline. */
export const ENDPOINT_STATE_PATH = '/run/metal-l2/endpoint-state';
/** keepalived's names for our instance and script, seen in its log and in `ip addr` labels. */
export const VRRP_INSTANCE = 'metal_l2_endpoint';
export const VRRP_SCRIPT = 'metal_l2_apiserver';

export interface KeepalivedParams {
  address: string;
  prefix: number;
  port: number;
  vxlan: number;
  virtualRouterID: number;
  /** OS interface name with placeholders. */
  interface: string;
  advertIntervalSec: number;
}

/**
 * Every machine starts as BACKUP with the same priority: the first whose API server answers becomes
 * MASTER and nobody preempts it (VRRP never preempts on equal priority), so the VIP moves only when
 * its holder fails. Multicast adverts (224.0.0.18, link-local: switches flood it like broadcast),
 * because a machine cannot know its peers' addresses at first boot (KCP creates them one by one and
 * replaces them on rollout). The track script has no weight: while it fails the instance is in FAULT
 * and holds nothing.
 */
export function renderKeepalivedConf(p: KeepalivedParams): string {
  return [
    `# metal-l2: announces this cluster's control-plane endpoint ${p.address}:${p.port} on VLAN ${p.vxlan}`,
    '# with VRRP (virtual router ' + String(p.virtualRouterID) + '). Written at first boot by /opt/metal-l2/metal-l2-net.',
    'global_defs {',
    '    enable_script_security',
    '    script_user root',
    '}',
    '',
    `vrrp_script ${VRRP_SCRIPT} {`,
    `    script "${APISERVER_CHECK_PATH}"`,
    `    interval ${p.advertIntervalSec}`,
    `    timeout ${p.advertIntervalSec}`,
    // Failed until its first run: no machine claims the VIP before its API server answers.
    '    init_fail',
    '    rise 1',
    '    fall 2',
    '}',
    '',
    `vrrp_instance ${VRRP_INSTANCE} {`,
    '    state BACKUP',
    `    interface ${p.interface}`,
    `    virtual_router_id ${p.virtualRouterID}`,
    '    priority 100',
    `    advert_int ${p.advertIntervalSec}`,
    '    virtual_ipaddress {',
    `        ${p.address}/${p.prefix}`,
    '    }',
    '    track_script {',
    `        ${VRRP_SCRIPT}`,
    '    }',
    `    notify "${NOTIFY_SCRIPT_PATH}"`,
    '}',
    '',
  ].join('\n');
}

/**
 * Succeeds while something accepts TCP connections on the API server's port on this machine (the
 * API server binds 0.0.0.0 by default). bash's /dev/tcp: no tool beyond what Debian and Ubuntu
 * always have; a refused local connect fails at once, keepalived's timeout covers a hung one.
 */
export function renderApiserverCheck(port: number): string {
  return [
    '#!/bin/bash',
    '# metal-l2: keepalived holds the control-plane VIP only while this succeeds: the local API server',
    `# accepts TCP connections on port ${port}.`,
    `exec 3<>/dev/tcp/127.0.0.1/${port}`,
    '',
  ].join('\n');
}

/**
 * keepalived runs it on each state change of every instance and group, with `INSTANCE|GROUP <name>
 * <state> <priority>` appended: our instance's state goes to a file an operator (or a test) reads,
 * instead of keepalived's log lines, whose wording and delivery are not ours. Written whole through a
 * rename, so a reader never sees half a word. keepalived forks a call per change without waiting:
 * two changes within the same instant (two machines claiming at once, one yielding) could land out
 * of order, so `ip addr` stays the authority on who holds the VIP.
 */
export function renderNotifyScript(): string {
  const dir = ENDPOINT_STATE_PATH.slice(0, ENDPOINT_STATE_PATH.lastIndexOf('/'));
  return [
    '#!/bin/sh',
    `# metal-l2: keepalived calls this on every state change; the state of ${VRRP_INSTANCE} (MASTER, BACKUP,`,
    `# FAULT, STOP) is kept in ${ENDPOINT_STATE_PATH}.`,
    `[ "$1" = INSTANCE ] && [ "$2" = ${VRRP_INSTANCE} ] || exit 0`,
    `mkdir -p ${dir}`,
    `printf '%s\\n' "$3" > ${ENDPOINT_STATE_PATH}.$$ && mv -f ${ENDPOINT_STATE_PATH}.$$ ${ENDPOINT_STATE_PATH}`,
    '',
  ].join('\n');
}

/**
 * Cloud-config machines only (Ignition machines, which have no package manager, run keepalived from
 * the metal-l2 image: announcer-unit.ts). Run by cloud-init after the network is applied (the files
 * are then in place with the OS interface names) and before the bootstrap's own commands (kubeadm
 * init/join needs the VIP). keepalived is
 * installed when the image lacks it: control-plane machines are hybrid-bonded and reach the
 * distribution's mirror over bond0. A failure stops the bootstrap (`exit 1`), as the network step does.
 */
export const ANNOUNCER_COMMANDS: readonly string[] = [
  '[ -x /usr/sbin/keepalived ] || (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends keepalived) || exit 1',
  'systemctl enable keepalived && systemctl restart keepalived || exit 1',
];
