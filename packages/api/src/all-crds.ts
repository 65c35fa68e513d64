import type { CrdManifest } from './crd.js';
import { blockCrds } from './ipam-block.js';
import { poolCrds } from './ipam-pool.js';
import { machineNetworkCrds } from './machine-network.js';
import { clusterEndpointCrds } from './cluster-endpoint.js';

interface CrdManifestShape {
  spec: { group: string; names: { plural: string } };
}

/** Every CRD this project owns, in the order crds/ and the chart list them. */
export function allCrds(): (CrdManifest & CrdManifestShape)[] {
  return [...poolCrds(), ...blockCrds(), ...machineNetworkCrds(), ...clusterEndpointCrds()] as (CrdManifest & CrdManifestShape)[];
}
