// The metadata service a device reaches from the host (metadata.platformequinix.com in the real
// service, which knows the caller by source IP). The simulator serves it per device under
// `/metadata/{deviceId}`: no token, as on the host, and only while the device could reach it:
// active, with bond0 still in layer 3 (the docs: "only in Layer 3 or Hybrid Bonded mode").

import { enforce, notFound, unprocessable } from '../errors.js';
import type { SimResponse } from '../http.js';
import { keepsLayer3 } from '../network-type.js';
import { renderMetadataDocument } from '../render/metadata.js';
import { checkUserStateEvent } from '../rules/user-state.js';
import type { SimulatorStore } from '../store.js';
import type { Device } from '../models.js';

export const METADATA_PREFIX = '/metadata';

export interface MetadataRequest {
  readonly store: SimulatorStore;
  readonly method: string;
  /** Path below METADATA_PREFIX: `/{deviceId}`, `/{deviceId}/userdata`, `/{deviceId}/events`, `/{deviceId}/phone-home`. */
  readonly path: string;
  readonly body: unknown;
  readonly publicUrl: string;
}

/** Where the device's own documents live, for tests and the data-plane harness. */
export function metadataPaths(
  publicUrl: string,
  deviceId: string,
): { metadata: string; userdata: string; userState: string; phoneHome: string } {
  const base = `${publicUrl}${METADATA_PREFIX}/${deviceId}`;
  return { metadata: base, userdata: `${base}/userdata`, userState: `${base}/events`, phoneHome: `${base}/phone-home` };
}

function reachableDevice(store: SimulatorStore, deviceId: string): Device {
  const device = store.devices.get(deviceId);
  if (device === undefined) throw notFound('no such device');
  if (device.state !== 'active')
    throw notFound(`device ${device.hostname} is ${device.state}: the metadata service answers once it is active`);
  // bond0 carries the addresses: a layer-2 bond1 beside it (4-port plans) does not cut the host off.
  const bond0 = store.addressBond(device);
  const type = store.networkTypeOf(bond0);
  if (!keepsLayer3(type))
    throw notFound(`device ${device.hostname} is in ${type} mode on ${bond0.name}: the metadata service is not reachable without layer 3`);
  return device;
}

export function handleMetadataRequest(r: MetadataRequest): SimResponse {
  const [deviceId, leaf, ...rest] = r.path.split('/').filter((s) => s !== '');
  if (deviceId === undefined || rest.length > 0) throw notFound();
  const device = reachableDevice(r.store, deviceId);
  const urls = metadataPaths(r.publicUrl, device.id);
  if (r.method === 'GET' && leaf === undefined) {
    return {
      status: 200,
      body: renderMetadataDocument(r.store, device, {
        apiUrl: `${r.publicUrl}/metal/v1`,
        userStateUrl: urls.userState,
        phoneHomeUrl: urls.phoneHome,
        userdataUrl: urls.userdata,
      }),
    };
  }
  if (r.method === 'GET' && leaf === 'userdata') return { status: 200, body: device.userdata, contentType: 'text/plain; charset=utf-8' };
  if (r.method === 'POST' && leaf === 'events') return postUserState(r.store, device, r.body);
  if (r.method === 'POST' && leaf === 'phone-home') {
    r.store.recordDeviceEvent(device, { type: 'instance.phone_home', state: 'succeeded', body: 'Device phoned home' });
    return { status: 204 };
  }
  throw notFound();
}

/**
 * A user-state event from the host: `{"state", "code", "message"}`. It shows in the device's events
 * as type `user.state`, the event's state the posted state, body the message; `interpolated`
 * carries the code as `<code>: <message>`.
 */
function postUserState(store: SimulatorStore, device: Device, body: unknown): SimResponse {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw unprocessable('the body must be a JSON object');
  const fields = body as Record<string, unknown>;
  enforce(checkUserStateEvent({ state: fields['state'], code: fields['code'] }));
  const message = typeof fields['message'] === 'string' ? fields['message'] : '';
  const state = String(fields['state']);
  const code = String(fields['code']);
  store.recordDeviceEvent(device, { type: 'user.state', state, body: message, interpolated: `${code}: ${message}` });
  return { status: 204 };
}
