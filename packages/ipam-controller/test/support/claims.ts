import { expect } from '@jest/globals';
import { claimObject, kinds, type Objects, type Obj } from '@metal-l2/test-support/objects';
import { timeouts } from '@metal-l2/test-support/timeouts';
import { waitFor } from '@metal-l2/test-support/wait-for';
import { allocationsOf } from './allocations.js';

/** Where a test's claims live: the client, the namespace and the IPAM version served. */
export interface ClaimSite {
  readonly objects: Objects;
  readonly namespace: string;
  readonly version?: string;
}

/**
 * Creates claims `<prefix>-<from>` … `<prefix>-<to - 1>` on one pool, 25 requests in flight, as a
 * MachineDeployment scale-up would.
 */
export async function createClaims(site: ClaimSite, burst: { pool: string; prefix: string; from?: number; to: number }): Promise<void> {
  const names = Array.from({ length: burst.to - (burst.from ?? 0) }, (_, i) => `${burst.prefix}-${(burst.from ?? 0) + i}`);
  for (let i = 0; i < names.length; i += 25) {
    await Promise.all(
      names
        .slice(i, i + 25)
        .map((n) => site.objects.create(kinds.claim(site.version), claimObject(n, site.namespace, { pool: burst.pool }))),
    );
  }
}

/** How many claims named `<prefix>-*` are bound and how many IPAddresses they have, read now from the API server (no cache). */
export async function burstProgress(site: ClaimSite, prefix: string): Promise<{ bound: number; addresses: number }> {
  const mine = (o: Obj): boolean => o.metadata.name.startsWith(`${prefix}-`);
  const claims = (await site.objects.list(kinds.claim(site.version), site.namespace)).filter(mine);
  const addresses = (await site.objects.list(kinds.address(site.version), site.namespace)).filter(mine);
  return { bound: claims.filter((c) => c.status?.addressRef?.name !== undefined).length, addresses: addresses.length };
}

/**
 * Waits until at least `atLeast` claims of the burst are bound (polling every 50 ms so the burst is
 * caught early). Call it just before the event a test means to land mid-burst.
 */
export async function firstBound(site: ClaimSite, burst: { prefix: string; atLeast: number }): Promise<void> {
  await waitFor(
    `${burst.atLeast} ${burst.prefix} claims bound`,
    async () => (await burstProgress(site, burst.prefix)).bound >= burst.atLeast,
    { timeoutMs: timeouts.burstBound, intervalMs: 50 },
  );
}

/**
 * Asserts, from a live read, that the burst is under way: some of its `count` claims are bound and
 * some are not. Call it right after the event (a kill, a restart) that must land mid-burst: if the
 * burst had not started or had already finished, this fails. Returns what it read, for the log.
 */
export async function expectMidBurst(
  site: ClaimSite,
  burst: { prefix: string; count: number },
): Promise<{ bound: number; addresses: number }> {
  const progress = await burstProgress(site, burst.prefix);
  expect(progress.bound).toBeGreaterThan(0);
  expect(progress.bound).toBeLessThan(burst.count);
  return progress;
}

/** Waits until `count` claims named `<prefix>-*` are bound and have IPAddresses; returns the addresses. */
export async function allBound(site: ClaimSite, burst: { prefix: string; count: number }): Promise<string[]> {
  const mine = (o: Obj): boolean => o.metadata.name.startsWith(`${burst.prefix}-`);
  return waitFor(
    `${burst.count} ${burst.prefix} claims bound`,
    async () => {
      const bound = (await site.objects.list(kinds.claim(site.version), site.namespace)).filter(
        (c) => mine(c) && c.status?.addressRef?.name !== undefined,
      );
      if (bound.length < burst.count) return undefined;
      const addresses = (await site.objects.list(kinds.address(site.version), site.namespace)).filter(mine);
      return addresses.length === burst.count ? addresses.map((a) => a.spec.address as string) : undefined;
    },
    { timeoutMs: timeouts.burstBound, intervalMs: 500 },
  );
}

/** Waits until one claim names its IPAddress in status, and returns that IPAddress. */
export async function boundAddress(site: ClaimSite, name: string): Promise<Obj> {
  return waitFor(
    `claim ${site.namespace}/${name} bound`,
    async () => {
      const claim = await site.objects.get(kinds.claim(site.version), name, site.namespace);
      const addressName = claim?.status?.addressRef?.name as string | undefined;
      return addressName === undefined ? undefined : site.objects.get(kinds.address(site.version), addressName, site.namespace);
    },
    { timeoutMs: timeouts.claimBound },
  );
}

/** Waits until the site's InClusterIPPool `name` is gone (its finalizer done). */
export async function poolGone(site: ClaimSite, name: string, timeoutMs: number = timeouts.claimBound): Promise<void> {
  await waitFor(
    `pool ${site.namespace}/${name} gone`,
    async () => (await site.objects.get(kinds.pool, name, site.namespace)) === undefined,
    {
      timeoutMs,
    },
  );
}

/**
 * Proof that the controller has decided every claim of `pool` written before this call, for a
 * "nothing happens" check to follow: a sentinel claim created now in the same pool is bound. The
 * claims cache applies the API server's events in order, so the pass that bound the sentinel had
 * every earlier claim of the pool in view; and one pass decides all of a pool's claims in one
 * status commit, so what it did to them is in that commit. With `linkCluster`, the sentinel links
 * (by spec.clusterName or, for v1beta1, the cluster-name label) to an unpaused Cluster of its own,
 * created now: the Clusters cache had every earlier Cluster too. Returns the pool as read after
 * that pass.
 */
export async function sentinelBound(
  site: ClaimSite,
  options: { readonly pool: string; readonly name: string; readonly linkCluster?: 'clusterName' | 'label' },
): Promise<Obj> {
  const { objects, namespace } = site;
  const link = options.linkCluster;
  if (link !== undefined) {
    await objects.create(kinds.cluster(site.version), { metadata: { name: options.name, namespace }, spec: { paused: false } });
  }
  await objects.create(
    kinds.claim(site.version),
    claimObject(options.name, namespace, {
      pool: options.pool,
      ...(link === 'clusterName' ? { clusterName: options.name } : {}),
      ...(link === 'label' ? { labels: { 'cluster.x-k8s.io/cluster-name': options.name } } : {}),
    }),
  );
  await boundAddress(site, options.name);
  const pool = await objects.get(kinds.pool, options.pool, namespace);
  if (pool === undefined) throw new Error(`pool ${namespace}/${options.pool} is gone`);
  return pool;
}

/** Asserts that the claim holds nothing: no address in the pool's allocations, no addressRef, no IPAddress. */
export async function expectUnallocated(site: ClaimSite, pool: Obj, claim: string): Promise<void> {
  const holders = Object.values(await allocationsOf(site.objects, pool));
  expect(holders).not.toContain(claim);
  expect(holders).not.toContain(`${site.namespace}/${claim}`);
  expect((await site.objects.get(kinds.claim(site.version), claim, site.namespace))?.status?.addressRef).toBeUndefined();
  expect(await site.objects.get(kinds.address(site.version), claim, site.namespace)).toBeUndefined();
}
