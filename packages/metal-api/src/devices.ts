// Devices: read a machine and its ports, list a project's machines, follow its event log (where
// the boot script's user-state messages appear), and create/update/delete (the CAPP test fixture
// and the demo create devices; controllers only read and update).

import { ignoreBody, listOf, objectWithId } from './decode.js';
import { paginate } from './pagination.js';
import type { PageOptions } from './pagination.js';
import { includeQuery, signalOf } from './transport.js';
import type { CallOptions, IncludeOptions } from './transport.js';
import { apiPath } from './transport.js';
import type { MetalTransport } from './transport.js';
import type { Device, DeviceCreateInMetroInput, DeviceUpdateInput, Event } from './types.js';

export const DEVICE_OPERATIONS = {
  get: 'findDeviceById',
  list: 'findProjectDevices',
  create: 'createDevice',
  update: 'updateDevice',
  delete: 'deleteDevice',
  events: 'findDeviceEvents',
} as const;

/** Filters of `findProjectDevices` that we use. */
export interface DeviceListOptions extends PageOptions, IncludeOptions {
  metro?: string;
  hostname?: string;
  tag?: string;
  search?: string;
}

export interface DeleteDeviceOptions extends CallOptions {
  /** Detach storage volumes that are still attached. */
  forceDelete?: boolean;
}

export interface DevicesApi {
  /** `GET /devices/{id}` (findDeviceById). */
  get(id: string, options?: IncludeOptions): Promise<Device>;
  /** `GET /projects/{id}/devices` (findProjectDevices), every page. */
  list(projectId: string, options?: DeviceListOptions): AsyncIterable<Device>;
  /** `POST /projects/{id}/devices` (createDevice). Not retried after the API may have acted. */
  create(projectId: string, input: DeviceCreateInMetroInput, options?: IncludeOptions): Promise<Device>;
  /** `PUT /devices/{id}` (updateDevice). */
  update(id: string, input: DeviceUpdateInput, options?: IncludeOptions): Promise<Device>;
  /** `DELETE /devices/{id}` (deleteDevice). */
  delete(id: string, options?: DeleteDeviceOptions): Promise<void>;
  /** `GET /devices/{id}/events` (findDeviceEvents), newest first as the API orders them, every page. */
  events(id: string, options?: PageOptions): AsyncIterable<Event>;
}

const device = objectWithId<Device>('device');
const deviceList = listOf<Device>('devices', 'device list');
const eventList = listOf<Event>('events', 'event list');

export function createDevicesApi(transport: MetalTransport): DevicesApi {
  return {
    get: (id, options) =>
      transport.send({
        operation: DEVICE_OPERATIONS.get,
        method: 'GET',
        path: apiPath`/devices/${id}`,
        query: includeQuery(options),
        decode: device,
        ...signalOf(options),
      }),

    list: (projectId, options) =>
      paginate((page) =>
        transport.send({
          operation: DEVICE_OPERATIONS.list,
          method: 'GET',
          path: apiPath`/projects/${projectId}/devices`,
          query: {
            ...includeQuery(options),
            metro: options?.metro,
            hostname: options?.hostname,
            tag: options?.tag,
            search: options?.search,
            page,
            per_page: options?.perPage,
          },
          decode: deviceList,
          ...signalOf(options),
        }),
      ),

    create: (projectId, input, options) =>
      transport.send({
        operation: DEVICE_OPERATIONS.create,
        method: 'POST',
        path: apiPath`/projects/${projectId}/devices`,
        query: includeQuery(options),
        body: input,
        decode: device,
        ...signalOf(options),
      }),

    update: (id, input, options) =>
      transport.send({
        operation: DEVICE_OPERATIONS.update,
        method: 'PUT',
        path: apiPath`/devices/${id}`,
        query: includeQuery(options),
        body: input,
        decode: device,
        ...signalOf(options),
      }),

    delete: (id, options) =>
      transport.send({
        operation: DEVICE_OPERATIONS.delete,
        method: 'DELETE',
        path: apiPath`/devices/${id}`,
        query: { force_delete: options?.forceDelete },
        decode: ignoreBody,
        ...signalOf(options),
      }),

    events: (id, options) =>
      paginate((page) =>
        transport.send({
          operation: DEVICE_OPERATIONS.events,
          method: 'GET',
          path: apiPath`/devices/${id}/events`,
          query: { page, per_page: options?.perPage },
          decode: eventList,
          ...signalOf(options),
        }),
      ),
  };
}
