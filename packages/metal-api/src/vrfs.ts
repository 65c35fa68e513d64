// VRFs: a project's private routing domain in one metro, holding the IP ranges that VRF-backed
// pools carve their subnets from (8 per project; ranges IPv4 /8-/29, IPv6 /59-/64).

import { ignoreBody, itemsOf, objectWithId } from './decode.js';
import { includeQuery, signalOf } from './transport.js';
import type { CallOptions, IncludeOptions } from './transport.js';
import { apiPath } from './transport.js';
import type { MetalTransport } from './transport.js';
import type { Vrf, VrfCreateInput } from './types.js';

export const VRF_OPERATIONS = {
  create: 'createVrf',
  list: 'findVrfs',
  get: 'findVrfById',
  delete: 'deleteVrf',
} as const;

export interface VrfListOptions extends IncludeOptions {
  metro?: string;
}

export interface VrfsApi {
  /** `POST /projects/{id}/vrfs` (createVrf). Not retried after the API may have acted. */
  create(projectId: string, input: VrfCreateInput, options?: IncludeOptions): Promise<Vrf>;
  /**
   * `GET /projects/{id}/vrfs` (findVrfs). The answer carries `meta`, but the operation takes no
   * page parameters, so this is one request (a project holds at most a handful of VRFs).
   */
  list(projectId: string, options?: VrfListOptions): Promise<Vrf[]>;
  /** `GET /vrfs/{id}` (findVrfById). */
  get(id: string, options?: IncludeOptions): Promise<Vrf>;
  /** `DELETE /vrfs/{id}` (deleteVrf). */
  delete(id: string, options?: CallOptions): Promise<void>;
}

const vrf = objectWithId<Vrf>('VRF');
const vrfList = itemsOf<Vrf>('vrfs', 'VRF list');

export function createVrfsApi(transport: MetalTransport): VrfsApi {
  return {
    create: (projectId, input, options) =>
      transport.send({
        operation: VRF_OPERATIONS.create,
        method: 'POST',
        path: apiPath`/projects/${projectId}/vrfs`,
        query: includeQuery(options),
        body: input,
        decode: vrf,
        ...signalOf(options),
      }),

    list: (projectId, options) =>
      transport.send({
        operation: VRF_OPERATIONS.list,
        method: 'GET',
        path: apiPath`/projects/${projectId}/vrfs`,
        query: { ...includeQuery(options), metro: options?.metro },
        decode: vrfList,
        ...signalOf(options),
      }),

    get: (id, options) =>
      transport.send({
        operation: VRF_OPERATIONS.get,
        method: 'GET',
        path: apiPath`/vrfs/${id}`,
        query: includeQuery(options),
        decode: vrf,
        ...signalOf(options),
      }),

    delete: (id, options) =>
      transport.send({
        operation: VRF_OPERATIONS.delete,
        method: 'DELETE',
        path: apiPath`/vrfs/${id}`,
        decode: ignoreBody,
        ...signalOf(options),
      }),
  };
}
