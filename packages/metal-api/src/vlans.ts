// Virtual networks (VLANs): metro-local, one `vxlan` number per project and metro. The pool
// controller creates and deletes them; the port planner resolves `vxlan` numbers through the list.

import { ignoreBody, itemsOf, objectWithId } from './decode.js';
import { includeQuery, signalOf } from './transport.js';
import type { CallOptions, IncludeOptions } from './transport.js';
import { apiPath } from './transport.js';
import type { MetalTransport } from './transport.js';
import type { VirtualNetwork, VirtualNetworkCreateInput } from './types.js';

export const VIRTUAL_NETWORK_OPERATIONS = {
  list: 'findVirtualNetworks',
  create: 'createVirtualNetwork',
  get: 'getVirtualNetwork',
  delete: 'deleteVirtualNetwork',
} as const;

export interface VirtualNetworkListOptions extends IncludeOptions {
  /** Metro code ("da", "sv"); without it every metro of the project is listed. */
  metro?: string;
}

export interface VirtualNetworksApi {
  /** `GET /projects/{id}/virtual-networks` (findVirtualNetworks; the API does not paginate it). */
  list(projectId: string, options?: VirtualNetworkListOptions): Promise<VirtualNetwork[]>;
  /** `POST /projects/{id}/virtual-networks` (createVirtualNetwork). */
  create(projectId: string, input: VirtualNetworkCreateInput, options?: IncludeOptions): Promise<VirtualNetwork>;
  /** `GET /virtual-networks/{id}` (getVirtualNetwork). */
  get(id: string, options?: IncludeOptions): Promise<VirtualNetwork>;
  /** `DELETE /virtual-networks/{id}` (deleteVirtualNetwork). */
  delete(id: string, options?: CallOptions): Promise<void>;
}

const virtualNetwork = objectWithId<VirtualNetwork>('virtual network');

const virtualNetworkList = itemsOf<VirtualNetwork>('virtual_networks', 'virtual network list');

export function createVirtualNetworksApi(transport: MetalTransport): VirtualNetworksApi {
  return {
    list: (projectId, options) =>
      transport.send({
        operation: VIRTUAL_NETWORK_OPERATIONS.list,
        method: 'GET',
        path: apiPath`/projects/${projectId}/virtual-networks`,
        query: { ...includeQuery(options), metro: options?.metro },
        decode: virtualNetworkList,
        ...signalOf(options),
      }),

    create: (projectId, input, options) =>
      transport.send({
        operation: VIRTUAL_NETWORK_OPERATIONS.create,
        method: 'POST',
        path: apiPath`/projects/${projectId}/virtual-networks`,
        query: includeQuery(options),
        body: input,
        decode: virtualNetwork,
        ...signalOf(options),
      }),

    get: (id, options) =>
      transport.send({
        operation: VIRTUAL_NETWORK_OPERATIONS.get,
        method: 'GET',
        path: apiPath`/virtual-networks/${id}`,
        query: includeQuery(options),
        decode: virtualNetwork,
        ...signalOf(options),
      }),

    delete: (id, options) =>
      transport.send({
        operation: VIRTUAL_NETWORK_OPERATIONS.delete,
        method: 'DELETE',
        path: apiPath`/virtual-networks/${id}`,
        decode: ignoreBody,
        ...signalOf(options),
      }),
  };
}
