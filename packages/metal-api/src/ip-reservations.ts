// IP reservations: public/private/global blocks and, for VRF-backed pools, subnets reserved inside
// a VRF's ranges. Both kinds are requested with the same operation and told apart by `type`.

import { ignoreBody, itemsOf, listOf, objectWithId } from './decode.js';
import { paginate } from './pagination.js';
import type { PageOptions } from './pagination.js';
import { includeQuery, signalOf } from './transport.js';
import type { CallOptions, IncludeOptions } from './transport.js';
import { apiPath } from './transport.js';
import type { MetalTransport } from './transport.js';
import type { AnyIPReservation, IPAssignment, IPReservationCreateInput, IPReservationType, VrfIpReservation } from './types.js';

export const IP_RESERVATION_OPERATIONS = {
  create: 'requestIPReservation',
  list: 'findIPReservations',
  get: 'findIPAddressById',
  delete: 'deleteIPAddress',
  listInVrf: 'findVrfIpReservations',
  getInVrf: 'findVrfIpReservation',
} as const;

export interface IPReservationListOptions extends PageOptions, IncludeOptions {
  /** Only these reservation types (`types=vrf&types=public_ipv4`). */
  types?: readonly IPReservationType[];
}

export interface IPReservationsApi {
  /**
   * `POST /projects/{id}/ips` (requestIPReservation): `type: "vrf"` reserves a subnet inside a VRF
   * range; other types request a public/private/global block. Not retried after the API may have
   * acted: list and adopt instead.
   */
  create(projectId: string, input: IPReservationCreateInput, options?: IncludeOptions): Promise<AnyIPReservation>;
  /** `GET /projects/{id}/ips` (findIPReservations), every page. */
  list(projectId: string, options?: IPReservationListOptions): AsyncIterable<AnyIPReservation>;
  /** `GET /ips/{id}` (findIPAddressById): a reservation, or an assignment when the id is one. */
  get(id: string, options?: IncludeOptions): Promise<AnyIPReservation | IPAssignment>;
  /** `DELETE /ips/{id}` (deleteIPAddress). */
  delete(id: string, options?: CallOptions): Promise<void>;
  /** `GET /vrfs/{id}/ips` (findVrfIpReservations; not paginated). */
  listInVrf(vrfId: string, options?: IncludeOptions): Promise<VrfIpReservation[]>;
  /** `GET /vrfs/{vrf_id}/ips/{id}` (findVrfIpReservation). */
  getInVrf(vrfId: string, id: string, options?: IncludeOptions): Promise<VrfIpReservation>;
}

const reservation = objectWithId<AnyIPReservation>('IP reservation');
const addressOrReservation = objectWithId<AnyIPReservation | IPAssignment>('IP address');
const reservationList = listOf<AnyIPReservation>('ip_addresses', 'IP reservation list');
const vrfReservation = objectWithId<VrfIpReservation>('VRF IP reservation');
const vrfReservationList = itemsOf<VrfIpReservation>('ip_addresses', 'VRF IP reservation list');

export function createIPReservationsApi(transport: MetalTransport): IPReservationsApi {
  return {
    create: (projectId, input, options) =>
      transport.send({
        operation: IP_RESERVATION_OPERATIONS.create,
        method: 'POST',
        path: apiPath`/projects/${projectId}/ips`,
        query: includeQuery(options),
        body: input,
        decode: reservation,
        ...signalOf(options),
      }),

    list: (projectId, options) =>
      paginate((page) =>
        transport.send({
          operation: IP_RESERVATION_OPERATIONS.list,
          method: 'GET',
          path: apiPath`/projects/${projectId}/ips`,
          query: { ...includeQuery(options), types: options?.types, page, per_page: options?.perPage },
          decode: reservationList,
          ...signalOf(options),
        }),
      ),

    get: (id, options) =>
      transport.send({
        operation: IP_RESERVATION_OPERATIONS.get,
        method: 'GET',
        path: apiPath`/ips/${id}`,
        query: includeQuery(options),
        decode: addressOrReservation,
        ...signalOf(options),
      }),

    delete: (id, options) =>
      transport.send({
        operation: IP_RESERVATION_OPERATIONS.delete,
        method: 'DELETE',
        path: apiPath`/ips/${id}`,
        decode: ignoreBody,
        ...signalOf(options),
      }),

    listInVrf: (vrfId, options) =>
      transport.send({
        operation: IP_RESERVATION_OPERATIONS.listInVrf,
        method: 'GET',
        path: apiPath`/vrfs/${vrfId}/ips`,
        query: includeQuery(options),
        decode: vrfReservationList,
        ...signalOf(options),
      }),

    getInVrf: (vrfId, id, options) =>
      transport.send({
        operation: IP_RESERVATION_OPERATIONS.getInVrf,
        method: 'GET',
        path: apiPath`/vrfs/${vrfId}/ips/${id}`,
        query: includeQuery(options),
        decode: vrfReservation,
        ...signalOf(options),
      }),
  };
}
