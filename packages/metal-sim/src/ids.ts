// Deterministic identifiers. Every id, MAC and short id comes from a seeded PRNG, so two runs with
// the same seed and the same call sequence produce byte-identical state (diffable logs, pinned
// test expectations). Without a seed the PRNG is seeded from crypto randomness.

import { randomBytes } from 'node:crypto';

/** A 32-bit PRNG (sfc32) seeded from a string hash; small, fast and good enough for ids and dice. */
export class Prng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: string) {
    const [a, b, c, d] = hashSeed(seed);
    this.a = a;
    this.b = b;
    this.c = c;
    this.d = d;
    // Discard the first outputs: sfc32 mixes poorly for a few rounds after seeding.
    for (let i = 0; i < 15; i++) this.nextUint32();
  }

  nextUint32(): number {
    this.a >>>= 0;
    this.b >>>= 0;
    this.c >>>= 0;
    this.d >>>= 0;
    let t = (this.a + this.b) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.d = (this.d + 1) | 0;
    t = (t + this.d) | 0;
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** A float in [0, 1). */
  nextFloat(): number {
    return this.nextUint32() / 4294967296;
  }

  bytes(count: number): Uint8Array {
    const out = new Uint8Array(count);
    for (let i = 0; i < count; i += 4) {
      const v = this.nextUint32();
      for (let j = 0; j < 4 && i + j < count; j++) out[i + j] = (v >>> (j * 8)) & 0xff;
    }
    return out;
  }
}

/** cyrb128: spreads any string over four 32-bit words. */
function hashSeed(seed: string): [number, number, number, number] {
  let h1 = 1779033703;
  let h2 = 3144134277;
  let h3 = 1013904242;
  let h4 = 2773480762;
  for (let i = 0; i < seed.length; i++) {
    const k = seed.charCodeAt(i);
    h1 = h2 ^ Math.imul(h1 ^ k, 597399067);
    h2 = h3 ^ Math.imul(h2 ^ k, 2869860233);
    h3 = h4 ^ Math.imul(h3 ^ k, 951274213);
    h4 = h1 ^ Math.imul(h4 ^ k, 2716044179);
  }
  h1 = Math.imul(h3 ^ (h1 >>> 18), 597399067);
  h2 = Math.imul(h4 ^ (h2 >>> 22), 2869860233);
  h3 = Math.imul(h1 ^ (h3 >>> 17), 951274213);
  h4 = Math.imul(h2 ^ (h4 >>> 19), 2716044179);
  h1 ^= h2 ^ h3 ^ h4;
  h2 ^= h1;
  h3 ^= h1;
  h4 ^= h1;
  return [h1 >>> 0, h2 >>> 0, h3 >>> 0, h4 >>> 0];
}

/** A fresh seed when the caller gave none. */
export function randomSeed(): string {
  return randomBytes(16).toString('hex');
}

/** Ids for simulator objects, all drawn from one PRNG stream. */
export class IdGenerator {
  private readonly prng: Prng;

  constructor(seed: string) {
    this.prng = new Prng(`${seed}:ids`);
  }

  /** An RFC 4122 version-4 UUID (the API's ids are UUIDs; the spec marks them `format: uuid`). */
  uuid(): string {
    const b = this.prng.bytes(16);
    b[6] = ((b[6] ?? 0) & 0x0f) | 0x40;
    b[8] = ((b[8] ?? 0) & 0x3f) | 0x80;
    const hex = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }

  /**
   * A unicast, locally administered MAC (first octet 0x02 bit set, 0x01 clear), so a simulated
   * NIC never collides with a real vendor's address when the data plane puts it on a veth.
   */
  mac(): string {
    const b = this.prng.bytes(6);
    b[0] = ((b[0] ?? 0) & 0xfc) | 0x02;
    return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join(':');
  }
}
