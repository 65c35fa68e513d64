import { createHash } from 'node:crypto';

/**
 * The virtual router id a Cluster's VIP announcer uses when its template names none: 1–255 from
 * a hash of the Cluster's UID, so two clusters on one VLAN rarely collide (a template sets one
 * explicitly when they do). It is resolved once, into the ClusterEndpoint's spec (and status), so
 * a Cluster recreated by clusterctl move (a new UID, no status) keeps the id its machines announce.
 */
export function virtualRouterIdOf(clusterUid: string): number {
  const digest = createHash('sha256').update(clusterUid).digest();
  return (digest.readUInt32BE(0) % 255) + 1;
}
