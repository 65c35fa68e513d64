// The MIME envelope around the bootstrap data: build it, recognise it, take the original back out.
// Part 1 is the original, byte for byte: either wrapped as text/plain (cloud-init sniffs its first
// line, so `## template: jinja` still renders) or, when the original is itself MIME, embedded as it
// is (its own headers make it the part). Part 2 is ours.
import { createHash } from 'node:crypto';

export const MARKER_HEADER = 'X-Metal-L2';
export const MARKER_VERSION = 'v1';

/** The headers of part 1 when we wrap a non-MIME original. The filename sorts after `runcmd`, so a
 * `#!` original runs after our step (cloud-init runs its scripts directory in name order). */
export const ORIGINAL_PART_HEADERS = [
  'Content-Type: text/plain; charset="utf-8"',
  'Content-Transfer-Encoding: 8bit',
  'Content-Disposition: attachment; filename="user-data"',
].join('\n');

const OUR_PART_HEADERS = [
  'Content-Type: text/cloud-config; charset="utf-8"',
  'Content-Transfer-Encoding: 8bit',
  'Content-Disposition: attachment; filename="metal-l2.cfg"',
].join('\n');

/** cloud-init parses user data as MIME only when `mime-version:` is in its first 4096 bytes. */
const MIME_SNIFF_BYTES = 4096;

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

export interface InjectionMarker {
  version: string;
  injectHash: string;
  origHash: string;
}

export function formatMarker(marker: InjectionMarker): string {
  return `${MARKER_HEADER}: ${marker.version}; inject=sha256:${marker.injectHash}; orig=sha256:${marker.origHash}`;
}

/** Whether cloud-init would read this text as MIME (and it starts with a header block). */
export function isMime(text: string): boolean {
  return /^[A-Za-z0-9-]+:/.test(text) && text.slice(0, MIME_SNIFF_BYTES).toLowerCase().includes('mime-version:');
}

/** The boundary: derived from the injection hash, and from `attempt` when an original contains it. */
export function boundaryCandidate(injectHash: string, attempt: number): string {
  const seed = attempt === 0 ? injectHash : sha256Hex(`${injectHash}:${attempt}`);
  return `==metal-l2-${seed.slice(0, 24)}==`;
}

export function chooseBoundary(original: string, injectHash: string): string {
  for (let attempt = 0; ; attempt += 1) {
    const boundary = boundaryCandidate(injectHash, attempt);
    if (!original.includes(boundary)) return boundary;
  }
}

export function buildEnvelope(input: { original: string; part: string; injectHash: string }): string {
  const { original, part, injectHash } = input;
  const boundary = chooseBoundary(original, injectHash);
  const marker = formatMarker({ version: MARKER_VERSION, injectHash, origHash: sha256Hex(original) });
  const partOne = isMime(original) ? original : `${ORIGINAL_PART_HEADERS}\n\n${original}`;
  return [
    `Content-Type: multipart/mixed; boundary="${boundary}"`,
    'MIME-Version: 1.0',
    marker,
    '',
    `--${boundary}`,
    // The line break before a delimiter belongs to the delimiter: part 1 keeps its last newline.
    partOne,
    `--${boundary}`,
    OUR_PART_HEADERS,
    '',
    part,
    `--${boundary}--`,
    '',
  ].join('\n');
}

export type ParsedEnvelope =
  | { kind: 'plain' }
  | { kind: 'envelope'; marker: InjectionMarker; original: string; part: string }
  | { kind: 'malformed'; message: string };

/** Recognise our envelope by its top-level headers; anything else is plain (not injected by us). */
export function parseEnvelope(value: string): ParsedEnvelope {
  const headerEnd = value.indexOf('\n\n');
  if (headerEnd < 0) return { kind: 'plain' };
  const headers = value.slice(0, headerEnd).split('\n');
  const markerLine = headers.find((h) => h.toLowerCase().startsWith(`${MARKER_HEADER.toLowerCase()}:`));
  if (markerLine === undefined) return { kind: 'plain' };
  const m = /^[^:]+:\s*(v[0-9]+);\s*inject=sha256:([0-9a-f]{64});\s*orig=sha256:([0-9a-f]{64})\s*$/.exec(markerLine);
  const boundary = headers
    .map((h) => /^content-type:\s*multipart\/mixed;\s*boundary="([^"]+)"\s*$/i.exec(h)?.[1])
    .find((b) => b !== undefined);
  if (m === null || boundary === undefined) return { kind: 'malformed', message: `the ${MARKER_HEADER} envelope's headers cannot be read` };
  const [, version = '', injectHash = '', origHash = ''] = m;
  if (version !== MARKER_VERSION) return { kind: 'malformed', message: `unknown ${MARKER_HEADER} version ${version}` };
  const delimiter = `--${boundary}\n`;
  const first = value.indexOf(delimiter, headerEnd);
  const second = first < 0 ? -1 : value.indexOf(`\n--${boundary}\n`, first + delimiter.length - 1);
  const close = second < 0 ? -1 : value.indexOf(`\n--${boundary}--`, second + 1);
  if (first < 0 || second < 0 || close < 0) return { kind: 'malformed', message: `the ${MARKER_HEADER} envelope does not have two parts` };
  const partOne = value.slice(first + delimiter.length, second);
  const partTwo = value.slice(second + boundary.length + 4, close);
  const original = partOne.startsWith(`${ORIGINAL_PART_HEADERS}\n\n`) ? partOne.slice(ORIGINAL_PART_HEADERS.length + 2) : partOne;
  const ourHeaders = `${OUR_PART_HEADERS}\n\n`;
  if (!partTwo.startsWith(ourHeaders)) return { kind: 'malformed', message: `the ${MARKER_HEADER} envelope's second part is not ours` };
  return { kind: 'envelope', marker: { version, injectHash, origHash }, original, part: partTwo.slice(ourHeaders.length) };
}
