// Bootstrap data + rendered network → user data. Called by the network controller before it removes
// its pause (never after the machine has a providerID: user data is read once). Idempotent: the value
// carries a marker with the hashes of both parts, so injecting again is a no-op or a re-wrap from the
// original, never a nested envelope. cloud-config is wrapped in a MIME envelope; Ignition (Flatcar)
// is edited in place (ignition.ts). One injection hash for both: the sha256 of the cloud-config part,
// which carries every file and command we add. The Ignition entries are a fixed function of it and,
// for a control plane, of the image its announcer unit runs keepalived from: like the keepalived
// version apt-get installs on a cloud-config machine, the runtime of the announcer, not its
// configuration, so a new image (a chart upgrade) moves no provisioned machine's hash.
import { renderCloudConfigPart } from './cloud-config.js';
import { buildEnvelope, isMime, parseEnvelope, sha256Hex } from './envelope.js';
import type { RenderedAnnouncer } from './endpoint-announcer.js';
import { appendOurs, findOurs, ignitionOrigHash, ignitionText, parseIgnition } from './ignition.js';
import type { RenderedNetwork } from './types.js';

export const InjectRefusalReason = {
  /**
   * `format: ignition` with a spec version that cannot be served: spec 1 (`ignitionVersion`, no
   * `storage.files` or `systemd.units` as later specs have them), experimental (`-experimental`: not
   * fixed, Ignition itself warns) and unknown versions. Served: 2.0.0-2.4.0 and 3.0.0-3.5.0.
   */
  IgnitionNotSupported: 'IgnitionNotSupported',
  /**
   * `format: ignition` with a network rendered for ifupdown or netplan: Ignition's OS (Flatcar) has
   * systemd-networkd only, and the boot script would fail at first boot, keeping kubeadm from running.
   */
  IgnitionNeedsNetworkd: 'IgnitionNeedsNetworkd',
  /**
   * `format: ignition` for a control plane with an endpoint announcer, and no announcer image: Ignition's
   * OS (Flatcar) has no package manager, so keepalived comes from an image (the network controller's
   * --announcer-image).
   */
  AnnouncerImageNotConfigured: 'AnnouncerImageNotConfigured',
  /** A `format` other than cloud-config or ignition. */
  UnsupportedFormat: 'UnsupportedFormat',
  /** The value is not `#cloud-config`, `## template: jinja`, a `#!` script or MIME; or, for ignition, not a JSON object with `ignition.version`. */
  UnsupportedContent: 'UnsupportedContent',
  /** The value carries our marker but the envelope cannot be read back. */
  MalformedEnvelope: 'MalformedEnvelope',
} as const;
export type InjectRefusalReason = (typeof InjectRefusalReason)[keyof typeof InjectRefusalReason];

export interface InjectUserDataInput {
  /** The bootstrap Secret's `data.value`, decoded. */
  value: string;
  /** The bootstrap Secret's `data.format`, if any (a missing format means cloud-config). */
  format: string | undefined;
  network: RenderedNetwork;
  /** A control-plane machine's endpoint announcer (renderEndpointAnnouncer); workers have none. */
  announcer?: RenderedAnnouncer;
  /**
   * The image Ignition machines run the announcer's keepalived from (announcerImageIssue says what a
   * valid one is). Cloud-config machines install keepalived with apt-get and do not use it.
   */
  announcerImage?: string;
}

export type InjectOutcome =
  /** Write `value` to the Secret; record `hash`. */
  | { kind: 'injected'; value: string; hash: string }
  /** The value already carries exactly this network (and announcer) over its original: write nothing. */
  | { kind: 'unchanged'; hash: string }
  | { kind: 'refused'; reason: InjectRefusalReason; message: string };

/** Text the injected part must never contain: Go template and Jinja syntax, and the keys Equinix's installer greps for. */
export const FORBIDDEN_IN_PART = ['{{', '{%', '{#', 'image_repo=', 'image_tag=', 'image_uri=', 'image_url=', 'verbose_logging='] as const;

export function injectUserData(input: InjectUserDataInput): InjectOutcome {
  const { value, format, network, announcer } = input;
  if (format === 'ignition') return injectIgnition(input);
  if (format !== undefined && format !== '' && format !== 'cloud-config') {
    return {
      kind: 'refused',
      reason: InjectRefusalReason.UnsupportedFormat,
      message: `bootstrap format "${format}" is not supported: only cloud-config and ignition`,
    };
  }
  const parsed = parseEnvelope(value);
  if (parsed.kind === 'malformed') {
    return {
      kind: 'refused',
      reason: InjectRefusalReason.MalformedEnvelope,
      message: `bootstrap data was injected before but ${parsed.message}`,
    };
  }
  const original = parsed.kind === 'envelope' ? parsed.original : value;
  const contentIssue = describeUnsupportedContent(original);
  if (contentIssue !== undefined) {
    return { kind: 'refused', reason: InjectRefusalReason.UnsupportedContent, message: contentIssue };
  }
  const { part, hash } = renderPart(network, announcer);
  assertTemplateSafe(part);
  if (
    parsed.kind === 'envelope' &&
    parsed.marker.injectHash === hash &&
    parsed.marker.origHash === sha256Hex(original) &&
    parsed.part === part
  ) {
    return { kind: 'unchanged', hash };
  }
  return { kind: 'injected', value: buildEnvelope({ original, part, injectHash: hash }), hash };
}

/** Ignition: our entries appended to the document (CABPK's stay first, unchanged); the same hash and marker rules. */
function injectIgnition(input: InjectUserDataInput): InjectOutcome {
  const parsed = parseIgnition(input.value);
  if (parsed.kind === 'unsupported') {
    const reason = parsed.reason === 'version' ? InjectRefusalReason.IgnitionNotSupported : InjectRefusalReason.UnsupportedContent;
    return { kind: 'refused', reason, message: parsed.message };
  }
  if (input.network.renderer !== 'networkd') {
    return {
      kind: 'refused',
      reason: InjectRefusalReason.IgnitionNeedsNetworkd,
      message: `Ignition bootstrap data is for an OS configured by systemd-networkd (Flatcar), but the network is rendered for ${input.network.renderer}: set spec.os.renderer: networkd in the MachineNetworkTemplate`,
    };
  }
  const ours = findOurs(parsed.config);
  if (ours.kind === 'malformed') {
    return {
      kind: 'refused',
      reason: InjectRefusalReason.MalformedEnvelope,
      message: `bootstrap data was injected before but ${ours.message}`,
    };
  }
  const { announcer, announcerImage } = input;
  if (announcer !== undefined && (announcerImage === undefined || announcerImage === '')) {
    return {
      kind: 'refused',
      reason: InjectRefusalReason.AnnouncerImageNotConfigured,
      message:
        'this control plane announces the Cluster endpoint, and its Ignition bootstrap data is for an OS without a package manager (Flatcar), ' +
        "where keepalived runs from a container image: the network controller has none configured; set --announcer-image (chart value network.announcerImage, which defaults to the chart's own image)",
    };
  }
  const original = ours.kind === 'injected' ? ours.original : parsed.config;
  const { hash } = renderPart(input.network, announcer);
  const { config, added } = appendOurs(original, parsed, {
    network: input.network,
    announcer: announcer === undefined || announcerImage === undefined ? undefined : { rendered: announcer, image: announcerImage },
    injectHash: hash,
    origHash: ignitionOrigHash(original),
  });
  // CAPP runs Go templating over the whole value: what we add must be inert to it.
  assertTemplateSafe(JSON.stringify(added));
  const value = ignitionText(config);
  if (value === input.value) return { kind: 'unchanged', hash };
  return { kind: 'injected', value, hash };
}

/** Our cloud-config part and its sha256: the one rule for the injection hash. */
function renderPart(network: RenderedNetwork, announcer: RenderedAnnouncer | undefined): { part: string; hash: string } {
  const part = renderCloudConfigPart(network, announcer);
  return { part, hash: sha256Hex(part) };
}

/**
 * The injection hash of this network (and announcer): what injectUserData records in the marker
 * and returns, for a controller to compare a provisioned machine's record with what it renders now.
 * It moves with any byte of our part; networkFingerprint moves only with what the OS is given.
 */
export function injectionHash(network: RenderedNetwork, announcer?: RenderedAnnouncer): string {
  return renderPart(network, announcer).hash;
}

/** Our Ignition entries, when the value is an Ignition document (JSON); undefined for anything else. */
function ignitionOurs(value: string): ReturnType<typeof findOurs> | undefined {
  if (!value.trimStart().startsWith('{')) return undefined;
  const parsed = parseIgnition(value);
  return parsed.kind === 'config' ? findOurs(parsed.config) : undefined;
}

/** The bootstrap data as it was before injection (the value itself when it was never injected; Ignition as compact JSON). */
export function extractOriginal(value: string): string {
  const ours = ignitionOurs(value);
  if (ours !== undefined) return ours.kind === 'injected' ? ignitionText(ours.original) : value;
  const parsed = parseEnvelope(value);
  return parsed.kind === 'envelope' ? parsed.original : value;
}

/** The injection hash recorded in a value's marker, if it carries one (either format). */
export function readInjectionHash(value: string): string | undefined {
  const ours = ignitionOurs(value);
  if (ours !== undefined) return ours.kind === 'injected' ? ours.marker.injectHash : undefined;
  const parsed = parseEnvelope(value);
  return parsed.kind === 'envelope' ? parsed.marker.injectHash : undefined;
}

function describeUnsupportedContent(original: string): string | undefined {
  if (isMime(original)) return undefined;
  const firstLine = original.split('\n', 1)[0]?.trimEnd() ?? '';
  if (firstLine === '#cloud-config' || /^##\s*template:\s*jinja$/i.test(firstLine) || firstLine.startsWith('#!')) return undefined;
  const shown = JSON.stringify(firstLine.slice(0, 40));
  return `bootstrap data starting with ${shown} is not supported: only #cloud-config (optionally "## template: jinja"), #! scripts and MIME multipart are wrapped`;
}

/** A broken invariant if it fails: everything variable in our part is base64. */
export function assertTemplateSafe(part: string): void {
  for (const bad of FORBIDDEN_IN_PART) {
    if (part.includes(bad))
      throw new Error(`injected part contains "${bad}": it would break Go templating, Jinja or the Equinix installer`);
  }
}
