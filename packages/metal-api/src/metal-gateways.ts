// Metal Gateways: the routed gateway of a VLAN, backed by a VRF IP reservation (VRF-backed pools)
// or by a public/private block. One per VLAN; deletion is asynchronous (202, state "deleting").

import { listOf, objectWithId } from './decode.js';
import { paginate } from './pagination.js';
import type { PageOptions } from './pagination.js';
import { includeQuery, signalOf } from './transport.js';
import type { IncludeOptions } from './transport.js';
import { apiPath } from './transport.js';
import type { MetalTransport } from './transport.js';
import type { AnyMetalGateway, AnyMetalGatewayCreateInput } from './types.js';

export const METAL_GATEWAY_OPERATIONS = {
  create: 'createMetalGateway',
  list: 'findMetalGatewaysByProject',
  get: 'findMetalGatewayById',
  delete: 'deleteMetalGateway',
} as const;

export interface MetalGatewaysApi {
  /** `POST /projects/{project_id}/metal-gateways` (createMetalGateway). Not retried after the API may have acted. */
  create(projectId: string, input: AnyMetalGatewayCreateInput, options?: IncludeOptions): Promise<AnyMetalGateway>;
  /** `GET /projects/{project_id}/metal-gateways` (findMetalGatewaysByProject), every page. */
  list(projectId: string, options?: PageOptions & IncludeOptions): AsyncIterable<AnyMetalGateway>;
  /** `GET /metal-gateways/{id}` (findMetalGatewayById). */
  get(id: string, options?: IncludeOptions): Promise<AnyMetalGateway>;
  /** `DELETE /metal-gateways/{id}` (deleteMetalGateway): answers 202 with the gateway, state "deleting". */
  delete(id: string, options?: IncludeOptions): Promise<AnyMetalGateway | undefined>;
}

const gateway = objectWithId<AnyMetalGateway>('Metal Gateway');
const gatewayList = listOf<AnyMetalGateway>('metal_gateways', 'Metal Gateway list');

export function createMetalGatewaysApi(transport: MetalTransport): MetalGatewaysApi {
  return {
    create: (projectId, input, options) =>
      transport.send({
        operation: METAL_GATEWAY_OPERATIONS.create,
        method: 'POST',
        path: apiPath`/projects/${projectId}/metal-gateways`,
        query: includeQuery(options),
        body: input,
        decode: gateway,
        ...signalOf(options),
      }),

    list: (projectId, options) =>
      paginate((page) =>
        transport.send({
          operation: METAL_GATEWAY_OPERATIONS.list,
          method: 'GET',
          path: apiPath`/projects/${projectId}/metal-gateways`,
          query: { ...includeQuery(options), page, per_page: options?.perPage },
          decode: gatewayList,
          ...signalOf(options),
        }),
      ),

    get: (id, options) =>
      transport.send({
        operation: METAL_GATEWAY_OPERATIONS.get,
        method: 'GET',
        path: apiPath`/metal-gateways/${id}`,
        query: includeQuery(options),
        decode: gateway,
        ...signalOf(options),
      }),

    // The spec promises the gateway in the 202 body; an empty body is accepted too, since nothing
    // here depends on it.
    delete: (id, options) =>
      transport.send({
        operation: METAL_GATEWAY_OPERATIONS.delete,
        method: 'DELETE',
        path: apiPath`/metal-gateways/${id}`,
        query: includeQuery(options),
        decode: (body: unknown) => (body === undefined ? undefined : gateway(body)),
        ...signalOf(options),
      }),
  };
}
