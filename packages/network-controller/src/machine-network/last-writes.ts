import type { MachineNetwork } from '@metal-l2/api';

interface Written {
  readonly basedOn: string;
  readonly object: MachineNetwork;
}

/**
 * The MachineNetworks this process wrote last, so the next reconcile of a key does not act on the
 * informer's older copy: a status write lands in the cache only when its watch event arrives, and
 * a reconcile that starts before that would, for example, miss the VLAN batch it just started and
 * start another. A cached copy is replaced only when it is exactly the version our write was based
 * on; any other version (ours arrived, or someone else wrote since) is newer, and wins.
 */
export class LastWrites {
  readonly #byKey = new Map<string, Written>();

  remember(key: string, basedOn: MachineNetwork, written: MachineNetwork): void {
    const rv = basedOn.metadata.resourceVersion;
    if (rv === undefined || written.metadata.resourceVersion === rv) return;
    this.#byKey.set(key, { basedOn: rv, object: written });
  }

  /** The freshest copy this process knows of. */
  view(key: string, cached: MachineNetwork | undefined): MachineNetwork | undefined {
    const written = this.#byKey.get(key);
    if (written === undefined || cached === undefined) return cached;
    if (cached.metadata.uid === written.object.metadata.uid && cached.metadata.resourceVersion === written.basedOn) return written.object;
    this.#byKey.delete(key);
    return cached;
  }

  forget(key: string): void {
    this.#byKey.delete(key);
  }
}
