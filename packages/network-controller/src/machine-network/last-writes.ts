import type { MachineNetwork } from '@metal-l2/api';

interface Written {
  /** Versions our write replaced: the one it was based on and any it passed through (metadata, then status). */
  readonly superseded: ReadonlySet<string>;
  readonly object: MachineNetwork;
}

/**
 * The MachineNetworks this process wrote last, so the next reconcile of a key does not act on the
 * informer's older copy: a status write lands in the cache only when its watch event arrives, and
 * a reconcile that starts before that would, for example, miss the VLAN batch it just started and
 * start another. A cached copy is replaced only when it is a version our write replaced (the one
 * it was based on, or the intermediate one between its metadata and its status patch); any other
 * version (ours arrived, or someone else wrote since) is newer, and wins.
 */
export class LastWrites {
  readonly #byKey = new Map<string, Written>();

  /** `writes`: what the server returned after each write of one patch, in order. */
  remember(key: string, basedOn: MachineNetwork, writes: readonly MachineNetwork[]): void {
    const last = writes[writes.length - 1];
    const rv = basedOn.metadata.resourceVersion;
    if (last === undefined || rv === undefined) return;
    const superseded = new Set([rv, ...writes.slice(0, -1).map((w) => w.metadata.resourceVersion ?? '')]);
    this.#byKey.set(key, { superseded, object: last });
  }

  /** The freshest copy this process knows of. */
  view(key: string, cached: MachineNetwork | undefined): MachineNetwork | undefined {
    const written = this.#byKey.get(key);
    if (written === undefined || cached === undefined) return cached;
    if (cached.metadata.uid === written.object.metadata.uid && written.superseded.has(cached.metadata.resourceVersion ?? ''))
      return written.object;
    this.#byKey.delete(key);
    return cached;
  }

  forget(key: string): void {
    this.#byKey.delete(key);
  }
}
