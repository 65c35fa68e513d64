// The Metal API client: one transport (auth, limits, retries, errors, metrics) shared by one
// object per resource. Controllers receive a MetalClient as an argument; main.ts builds it.

import { createDevicesApi, DEVICE_OPERATIONS } from './devices.js';
import type { DevicesApi } from './devices.js';
import { createIPReservationsApi, IP_RESERVATION_OPERATIONS } from './ip-reservations.js';
import type { IPReservationsApi } from './ip-reservations.js';
import { createMetalGatewaysApi, METAL_GATEWAY_OPERATIONS } from './metal-gateways.js';
import type { MetalGatewaysApi } from './metal-gateways.js';
import { createPortsApi, PORT_OPERATIONS } from './ports.js';
import type { PortsApi } from './ports.js';
import { createPrometheusObserver } from './prometheus.js';
import { createTransport } from './transport.js';
import type { MetalRequest, MetalTransport, MetalTransportOptions } from './transport.js';
import { createVirtualNetworksApi, VIRTUAL_NETWORK_OPERATIONS } from './vlans.js';
import type { VirtualNetworksApi } from './vlans.js';
import { createVrfsApi, VRF_OPERATIONS } from './vrfs.js';
import type { VrfsApi } from './vrfs.js';
import type { MetalApiObserver, MetalLogger } from './observer.js';
import type { Registry } from 'prom-client';

export interface MetalClientOptions extends MetalTransportOptions {
  /**
   * Registers the client's metrics here (see createPrometheusObserver). May be combined with
   * `observer`; both are fed.
   */
  registry?: Registry;
}

export interface MetalClient {
  readonly baseUrl: string;
  readonly devices: DevicesApi;
  readonly ports: PortsApi;
  readonly virtualNetworks: VirtualNetworksApi;
  readonly vrfs: VrfsApi;
  readonly ipReservations: IPReservationsApi;
  readonly metalGateways: MetalGatewaysApi;
  /** Sends an operation this client does not wrap (same auth, retries, limits and metrics). */
  send<T>(request: MetalRequest<T>): Promise<T>;
  /**
   * The same client (same token, rate limit, retries and metrics) with `signal` on every call, on
   * top of each call's own, and its calls logged to `logger` when given: a reconcile hands its
   * steps one of these, so shutdown or a lost lease cancels whatever Metal call it is making
   * (waits for a retry or the rate limit included), and the lines carry its reconcileID.
   */
  withContext(context: MetalCallContext): MetalClient;
}

export interface MetalCallContext {
  readonly signal: AbortSignal;
  readonly logger?: MetalLogger;
}

/** Every spec operationId the resource objects call. */
export const COVERED_OPERATIONS: readonly string[] = [
  ...Object.values(DEVICE_OPERATIONS),
  ...Object.values(PORT_OPERATIONS),
  ...Object.values(VIRTUAL_NETWORK_OPERATIONS),
  ...Object.values(VRF_OPERATIONS),
  ...Object.values(IP_RESERVATION_OPERATIONS),
  ...Object.values(METAL_GATEWAY_OPERATIONS),
];

/** Builds a client; nothing is sent until a method is called. */
export function createMetalClient(options: MetalClientOptions): MetalClient {
  const { registry, observer, ...rest } = options;
  const observers = [observer, registry === undefined ? undefined : createPrometheusObserver(registry)].filter(
    (o): o is MetalApiObserver => o !== undefined,
  );
  return clientOver(createTransport({ ...rest, observer: combineObservers(observers) }));
}

function clientOver(transport: MetalTransport): MetalClient {
  return {
    baseUrl: transport.baseUrl,
    devices: createDevicesApi(transport),
    ports: createPortsApi(transport),
    virtualNetworks: createVirtualNetworksApi(transport),
    vrfs: createVrfsApi(transport),
    ipReservations: createIPReservationsApi(transport),
    metalGateways: createMetalGatewaysApi(transport),
    send: (request) => transport.send(request),
    withContext: (context) => clientOver(inContext(transport, context)),
  };
}

function inContext(transport: MetalTransport, context: MetalCallContext): MetalTransport {
  return {
    baseUrl: transport.baseUrl,
    send: (request) =>
      transport.send({
        ...request,
        signal: request.signal === undefined ? context.signal : AbortSignal.any([request.signal, context.signal]),
        ...(context.logger === undefined || request.logger !== undefined ? {} : { logger: context.logger }),
      }),
  };
}

function combineObservers(observers: readonly MetalApiObserver[]): MetalApiObserver {
  return {
    attemptFinished: (e) => observers.forEach((o) => o.attemptFinished?.(e)),
    retryScheduled: (e) => observers.forEach((o) => o.retryScheduled?.(e)),
    callFinished: (e) => observers.forEach((o) => o.callFinished?.(e)),
    rateLimitWaited: (e) => observers.forEach((o) => o.rateLimitWaited?.(e)),
  };
}
