// The address ranges the simulator hands blocks out of: devices' management addresses, public and
// private reservations, and the private blocks Metal Gateways make for themselves.

import { unprocessable } from './errors.js';
import { BlockPool, parseCidr, type Cidr } from './ip-math.js';

/** The address pools devices and reservations are carved from (documentation-style, never routed). */
const POOLS = {
  publicV4: '147.75.0.0/16',
  privateV4: '10.64.0.0/10',
  publicV6: '2604:1380:4600::/40',
  globalV4: '147.28.0.0/16',
  /**
   * Public IPv4 reservations (elastic IPs, public blocks) come from their own range, as on the
   * real API, whose reservations never looked like a device's /31s or began at a provider
   * block's network address (the first reservation here is 145.40.64.37/32, not x.x.0.0/32).
   */
  elasticV4: '145.40.64.0/18',
} as const;

export type PoolName = keyof typeof POOLS;

/** Where each pool starts handing out blocks (aligned up to the block size). */
const POOL_OFFSETS: Partial<Record<PoolName, bigint>> = { elasticV4: 37n };

export class AddressPools {
  private readonly pools = new Map<PoolName, BlockPool>(
    (Object.keys(POOLS) as PoolName[]).map((name) => [name, new BlockPool(this.range(name), POOL_OFFSETS[name])]),
  );

  /** The whole range of a pool (an address's `parent_block`). */
  range(name: PoolName): Cidr {
    const c = parseCidr(POOLS[name]);
    if (c === undefined) throw new Error(`internal: bad pool ${POOLS[name]}`);
    return c;
  }

  /** A block of the pool; a used-up pool is the caller's 422 (the API runs out too). */
  allocate(name: PoolName, prefix: number): Cidr {
    const block = this.pools.get(name)?.allocate(prefix);
    if (block === undefined) throw unprocessable(`the simulator's ${name} pool (${POOLS[name]}) has no /${prefix} left`);
    return block;
  }
}
