// Ethernet frames as QEMU hands them over (no FCS): read and change the 802.1Q tag. Pure.

const TPID_8021Q = 0x8100;
const HEADER_MACS = 12;

/** The VLAN id of an 802.1Q-tagged frame; undefined for an untagged or priority-tagged (VID 0) one. */
export function frameVid(frame: Buffer): number | undefined {
  if (frame.length < HEADER_MACS + 4 || frame.readUInt16BE(HEADER_MACS) !== TPID_8021Q) return undefined;
  const vid = frame.readUInt16BE(HEADER_MACS + 2) & 0x0fff;
  return vid === 0 ? undefined : vid;
}

/** Whether the frame carries an 802.1Q header (a VID 0 priority tag included). */
export function isTagged(frame: Buffer): boolean {
  return frame.length >= HEADER_MACS + 4 && frame.readUInt16BE(HEADER_MACS) === TPID_8021Q;
}

/** The frame without its 802.1Q header (the same frame if it has none). */
export function untagFrame(frame: Buffer): Buffer {
  if (!isTagged(frame)) return frame;
  return Buffer.concat([frame.subarray(0, HEADER_MACS), frame.subarray(HEADER_MACS + 4)]);
}

/** The frame with exactly one 802.1Q header carrying `vid` (an existing header is replaced). */
export function tagFrame(frame: Buffer, vid: number): Buffer {
  const inner = untagFrame(frame);
  const tag = Buffer.alloc(4);
  tag.writeUInt16BE(TPID_8021Q, 0);
  tag.writeUInt16BE(vid & 0x0fff, 2);
  return Buffer.concat([inner.subarray(0, HEADER_MACS), tag, inner.subarray(HEADER_MACS)]);
}

/** The frame as it leaves a port: tagged with `vid`, or untagged when `vid` is undefined. */
export function egressFrame(frame: Buffer, vid: number | undefined): Buffer {
  return vid === undefined ? untagFrame(frame) : tagFrame(frame, vid);
}
