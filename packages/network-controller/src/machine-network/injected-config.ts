import {
  CapiLabels,
  MachineNetworkConditionTypes,
  MachineNetworkEventReasons,
  MachineNetworkReasons,
  type AnnouncedEndpoint,
  type MachineNetworkStatus,
} from '@metal-l2/api';
import { getCondition, proceed, type StepOutcome } from '@metal-l2/kube';
import {
  RENDERER_VERSION,
  injectionHash,
  networkFingerprint,
  type PortConfig,
  type RenderedAnnouncer,
  type RenderedNetwork,
} from '@metal-l2/machine-config';
import { renderAnnouncement, type Announcement } from './endpoint-announcer.js';
import { type MachineNetworkScope, markCondition } from './scope.js';

// What a provisioned machine booted with, recorded in status.userData at injection: the hash of our
// bytes (the marker's), the renderer version, the fingerprint of what the OS was given that matters
// (networkFingerprint: addresses, VLANs, routes, the endpoint it announces) and that endpoint. A
// provisioned machine is compared with what it would be given now: the same bytes → Injected; other
// bytes, same fingerprint → InjectedByOlderRelease (our rendering changed, the machine did not; Ready
// stays True); another fingerprint → InjectedConfigurationDiffers.

export type UserDataRecord = NonNullable<MachineNetworkStatus['userData']>;

/** The record of an injection this release made (or found it would make, byte for byte). */
export function injectionRecord(at: {
  readonly secretName: string;
  readonly hash: string;
  readonly ports: readonly PortConfig[];
  readonly announcement: Announcement | undefined;
}): UserDataRecord {
  const endpoint = at.announcement?.endpoint;
  return {
    secretName: at.secretName,
    hash: at.hash,
    rendererVersion: RENDERER_VERSION,
    fingerprint: networkFingerprint({ ports: at.ports, endpoint }),
    ...(endpoint === undefined ? {} : { announcedEndpoint: { ...endpoint } }),
  };
}

/** What a provisioned machine is compared with: its network now and the announcer its Cluster gives now (none while it waits). */
export interface InjectedCheck {
  readonly ports: readonly PortConfig[];
  readonly network: RenderedNetwork;
  readonly current: Announcement | undefined;
  /** The condition's message when the bytes are what was injected. */
  readonly message: string;
}

/**
 * A provisioned machine booted from user data its status.userData records (hash set). Its
 * conditions follow what its OS was given, never our rendering nor the announcer its Cluster would
 * give a new control plane now. The ports are still configured (the step proceeds): they do not
 * depend on the addresses.
 */
export function checkInjected(scope: MachineNetworkScope, at: InjectedCheck): StepOutcome {
  const record = scope.machineNetwork.status?.userData ?? {};
  if (record.fingerprint === undefined) return checkPreviousRelease(scope, at, record);
  const compared = comparedAnnouncement(record.announcedEndpoint, at);
  const now = injectionHash(at.network, compared.announcer);
  if (now === record.hash) return markInjected(scope, at.message);
  const fingerprint = networkFingerprint({ ports: at.ports, endpoint: compared.endpoint });
  if (fingerprint === record.fingerprint) return markOlderRelease(scope, { record, now, endpoint: compared.endpoint });
  return markDiffers(scope, { record, now, announced: record.announcedEndpoint, current: at.current });
}

/**
 * The endpoint a machine is compared with: none when it was given none (a Cluster linked later
 * cannot change what it booted with); the one its Cluster has now when there is one (a VIP moved
 * elsewhere matters); else the one it recorded (an annotation removed, or an endpoint set by hand,
 * does not take the VIP off a running machine).
 */
function comparedAnnouncement(
  recorded: AnnouncedEndpoint | undefined,
  at: InjectedCheck,
): { readonly endpoint?: AnnouncedEndpoint; readonly announcer?: RenderedAnnouncer } {
  if (recorded === undefined) return {};
  if (at.current !== undefined) return at.current;
  const rendered = renderAnnouncement(recorded, at.ports);
  // Not renderable on these addresses any more: the fingerprint still compares the endpoint.
  return 'next' in rendered ? rendered.next : { endpoint: recorded };
}

/**
 * A machine injected by the release before records: only the hash is there. That release checked
 * on every pass that the addresses render to it, so a machine it left UserDataInjected=True
 * (Injected) booted with the addresses it has now: its record is filled in from them (and from
 * the announcer its Cluster gives now) and it says InjectedByOlderRelease. One it left
 * InjectedConfigurationDiffers (or unchecked) keeps saying it differs, unless the bytes match.
 */
function checkPreviousRelease(scope: MachineNetworkScope, at: InjectedCheck, record: UserDataRecord): StepOutcome {
  const mn = scope.machineNetwork;
  const now = injectionHash(at.network, at.current?.announcer);
  const previous = getCondition(mn.status?.conditions, MachineNetworkConditionTypes.userDataInjected);
  const verified = previous?.status === 'True' && previous.reason === MachineNetworkReasons.injected;
  // What it announces is not recorded: the announcer its Cluster gives now is the best guess.
  if (now !== record.hash && !verified) return markDiffers(scope, { record, now, announced: at.current?.endpoint, current: at.current });
  const endpoint = at.current?.endpoint;
  (mn.status ??= {}).userData = {
    ...record,
    fingerprint: networkFingerprint({ ports: at.ports, endpoint }),
    ...(endpoint === undefined ? {} : { announcedEndpoint: { ...endpoint } }),
  };
  if (now === record.hash) return markInjected(scope, at.message);
  return markOlderRelease(scope, { record, now, endpoint });
}

function markInjected(scope: MachineNetworkScope, message: string): StepOutcome {
  const previous = getCondition(scope.machineNetwork.status?.conditions, MachineNetworkConditionTypes.userDataInjected);
  // The message of the injection stays while nothing changed.
  if (previous?.status === 'True' && previous.reason === MachineNetworkReasons.injected) return proceed;
  markCondition(
    scope.machineNetwork,
    { type: MachineNetworkConditionTypes.userDataInjected, status: 'True', reason: MachineNetworkReasons.injected, message },
    scope.now,
  );
  return proceed;
}

const short = (hash: string | undefined): string => `sha256:${(hash ?? '').slice(0, 12)}`;
const vip = (e: AnnouncedEndpoint): string => `${e.address}:${e.port}`;

/** Who rendered the bytes a machine booted with, from its record. */
function renderedBy(record: UserDataRecord): string {
  const version = record.rendererVersion;
  if (version === undefined) return 'an earlier metal-l2 release (one that recorded no renderer version)';
  if (version === RENDERER_VERSION) return `renderer version ${version} with other settings (such as another --metadata-url)`;
  return `renderer version ${version} (this release renders version ${RENDERER_VERSION})`;
}

function markOlderRelease(
  scope: MachineNetworkScope,
  at: { readonly record: UserDataRecord; readonly now: string; readonly endpoint: AnnouncedEndpoint | undefined },
): StepOutcome {
  const given = `its addresses, VLANs and routes${at.endpoint === undefined ? '' : ` and the endpoint ${vip(at.endpoint)} it announces`}`;
  const message =
    `the server booted with network configuration ${short(at.record.hash)} rendered by ${renderedBy(at.record)}; this release ` +
    `renders ${short(at.now)}, but ${given} are the same (fingerprint ${short(scope.machineNetwork.status?.userData?.fingerprint)}): ` +
    'nothing needs doing, the machine keeps what it booted with';
  markCondition(
    scope.machineNetwork,
    { type: MachineNetworkConditionTypes.userDataInjected, status: 'True', reason: MachineNetworkReasons.injectedByOlderRelease, message },
    scope.now,
  );
  return proceed;
}

/** What a user can safely do about a machine whose OS has other addresses than its claims. */
function advice(scope: MachineNetworkScope, at: { announced: AnnouncedEndpoint | undefined; current: Announcement | undefined }): string {
  const controlPlane = scope.machine?.metadata.labels?.[CapiLabels.controlPlane] !== undefined;
  if (at.announced === undefined) {
    return controlPlane
      ? 'replace control-plane machines one at a time through their KubeadmControlPlane (a rollout), each new one Ready before the next goes'
      : 'replace the machine (delete its Machine; its MachineDeployment or MachineSet creates one that boots with these addresses)';
  }
  const holds = `this control plane announces the Cluster endpoint ${vip(at.announced)} (VIP, VLAN ${at.announced.vxlan}): do not delete it to fix this, or the endpoint may be left without a holder`;
  if (at.current === undefined) {
    return `${holds}; control planes created now would not announce it (the Cluster's endpoint is not its ClusterEndpoint's address any more), so keep it while anything reaches the Cluster through ${at.announced.address}`;
  }
  return `${holds}. A KubeadmControlPlane rollout replaces control planes one at a time and each new one announces ${vip(at.current.endpoint)}: let each be Ready (status.userData.announcedEndpoint set) before the next goes`;
}

/**
 * The OS was given something else than the machine's addresses give now (a claim re-made with
 * another address): its addresses may be given to another machine. Said with a condition and a
 * Warning Event (once), never passed over; Ready stays False while it lasts.
 */
function markDiffers(
  scope: MachineNetworkScope,
  at: {
    readonly record: UserDataRecord;
    readonly now: string;
    /** The endpoint the machine announces (recorded, or the best guess for a machine injected before records). */
    readonly announced: AnnouncedEndpoint | undefined;
    readonly current: Announcement | undefined;
  },
): StepOutcome {
  const mn = scope.machineNetwork;
  const addresses = (mn.status?.addresses ?? []).map((a) => `${a.port}.${a.vxlan} ${a.address}/${a.prefix}`).join(', ');
  const endpoint = at.current === undefined ? '' : `; endpoint ${vip(at.current.endpoint)}, VRRP id ${at.current.endpoint.virtualRouterID}`;
  const now = `${short(at.now)}: ${addresses || 'no addresses'}${endpoint}`;
  // A record without a fingerprint (an earlier release's, never verified here) cannot say what the OS was given.
  const what =
    at.record.fingerprint === undefined
      ? `recorded without a fingerprint, so whether its OS has what it would be given now (${now}) cannot be told: if a claim was re-made, `
      : `and what its OS was given differs from what it would be given now (${now}): the OS may not have these addresses, and `;
  const message = `the server booted with network configuration ${short(at.record.hash)}, ${what}addresses it has may be given to another machine; ${advice(scope, at)}`;
  const previous = getCondition(mn.status?.conditions, MachineNetworkConditionTypes.userDataInjected);
  if (previous?.reason !== MachineNetworkReasons.injectedConfigurationDiffers) {
    scope.ctx.events.event(mn, { type: 'Warning', reason: MachineNetworkEventReasons.injectedConfigurationDiffers, message });
  }
  markCondition(
    mn,
    {
      type: MachineNetworkConditionTypes.userDataInjected,
      status: 'False',
      reason: MachineNetworkReasons.injectedConfigurationDiffers,
      message,
    },
    scope.now,
  );
  return proceed;
}
