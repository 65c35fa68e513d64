import type { IPPool, PoolStatus } from '@metal-l2/api';
import { jsonEqual, objectPatch } from '@metal-l2/kube';

/**
 * The status each pool's last status write from this process sent. Its watch event tells the pass
 * that wrote it nothing new, but it can arrive before the write's answer (so before the version it
 * produced is known): it is recognised by content instead, as an update that changed nothing but
 * status, to exactly the status we sent (guarded by the version it replaced, so the server holds
 * that status and nothing merged into it).
 */
export class OwnStatusWrites {
  private readonly sent = new Map<string, PoolStatus>();

  sending(key: string, status: PoolStatus): void {
    this.sent.set(key, status);
  }

  isOurs(key: string, before: IPPool, after: IPPool): boolean {
    const sent = this.sent.get(key);
    return (
      sent !== undefined &&
      before.metadata.deletionTimestamp === after.metadata.deletionTimestamp &&
      objectPatch(before, after) === undefined &&
      jsonEqual(after.status, sent)
    );
  }

  forget(key: string): void {
    this.sent.delete(key);
  }
}
