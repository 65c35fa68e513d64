import { Buffer } from 'node:buffer';
import { resourcePath } from './api.js';
// What differs between the two providers under the same burst: the contract version the CRDs
// serve, the pool kind, how to tell the pool was reconciled, and what its status must say after.

/**
 * metal-l2: CAPI v1.14 CRDs (IPAM v1beta2 storage), our InClusterIPPool, its allocations in its
 * IPAddressBlocks (status.allocations of each; the pool keeps counts and conditions).
 */
const block = { group: 'ipam.metal.x-k8s.io', version: 'v1alpha1', plural: 'ipaddressblocks' };

export const ours = {
  label: 'metal-l2',
  claim: { group: 'ipam.cluster.x-k8s.io', version: 'v1beta2', plural: 'ipaddressclaims' },
  address: { group: 'ipam.cluster.x-k8s.io', version: 'v1beta2', plural: 'ipaddresses' },
  pool: { group: 'ipam.metal.x-k8s.io', version: 'v1alpha1', plural: 'inclusterippools', kind: 'InClusterIPPool' },
  poolReady: (pool) => (pool.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'),
  /** The pool's blocks hold one entry per IPAddress, keyed by its address, naming its claim. */
  async checkPool(pool, addresses, { api, namespace }) {
    const blockNamespace = pool.status?.blocks?.namespace ?? namespace;
    const blocks = (await api.get(resourcePath({ ...block, namespace: blockNamespace }))).items.filter(
      (b) => b.spec.poolRef.uid === pool.metadata.uid,
    );
    const allocations = Object.assign({}, pool.status?.allocations ?? {}, ...blocks.map((b) => b.status?.allocations ?? {}));
    const entries = Object.entries(allocations);
    const problems = [];
    const claimsNamed = new Set(entries.map(([, claim]) => claim));
    if (claimsNamed.size !== entries.length) problems.push(`allocations name ${entries.length - claimsNamed.size} claims more than once`);
    if (entries.length !== addresses.length) problems.push(`allocations has ${entries.length} entries for ${addresses.length} IPAddresses`);
    for (const a of addresses) {
      if (allocations[a.spec.address] !== a.spec.claimRef?.name) {
        problems.push(`allocations[${a.spec.address}] is ${allocations[a.spec.address]}, IPAddress says ${a.spec.claimRef?.name}`);
        break;
      }
    }
    const bytes = blocks.map((b) => Buffer.byteLength(JSON.stringify(b)));
    return {
      summary: `${blocks.length} blocks of ${pool.status?.blocks?.size} addresses, ${entries.length} entries, ${claimsNamed.size} distinct claims; largest block ${Math.max(0, ...bytes)} bytes, pool object ${Buffer.byteLength(JSON.stringify(pool))} bytes (no managedFields)`,
      problems,
    };
  },
};

/**
 * A release of the reference in-cluster provider: its own pool kind (v1alpha2 in both v1.0.3 and
 * v1.1.0), and the CAPI IPAM contract version it speaks (v1beta1 up to v1.0.x, v1beta2 from v1.1.0).
 */
function inCluster(version, ipamVersion) {
  return {
    label: `in-cluster ${version}`,
    claim: { group: 'ipam.cluster.x-k8s.io', version: ipamVersion, plural: 'ipaddressclaims' },
    address: { group: 'ipam.cluster.x-k8s.io', version: ipamVersion, plural: 'ipaddresses' },
    pool: { group: 'ipam.cluster.x-k8s.io', version: 'v1alpha2', plural: 'inclusterippools', kind: 'InClusterIPPool' },
    poolReady: (pool) => typeof pool.status?.ipAddresses?.total === 'number' && pool.status.ipAddresses.total > 0,
    checkPool(pool, addresses) {
      const used = pool.status?.ipAddresses?.used;
      const problems = [];
      // The pool reconciler counts on its own schedule; report, do not fail, a lagging count.
      const note = used === addresses.length ? '' : ` (status lags: ${addresses.length} IPAddresses)`;
      return { summary: `status.ipAddresses.used: ${used}${note}`, problems };
    },
  };
}

/** v1.0.3: CAPI v1.10.10 CRDs (IPAM v1beta1 storage). */
export const referenceV1_0 = inCluster('v1.0.3', 'v1beta1');
/** v1.1.0, the newest release: CAPI v1.11 CRDs, IPAM v1beta2 (claims and IPAddresses). */
export const referenceV1_1 = inCluster('v1.1.0', 'v1beta2');
