// The API route table: every operation the simulator serves, by the spec's operationId.

import type { RouteDef } from '../http.js';
import { bgpRoutes } from './bgp.js';
import { deviceRoutes } from './devices.js';
import { ipReservationRoutes } from './ip-reservations.js';
import { metalGatewayRoutes } from './metal-gateways.js';
import { portRoutes } from './ports.js';
import { projectRoutes } from './projects.js';
import { virtualNetworkRoutes } from './virtual-networks.js';
import { vrfRoutes } from './vrfs.js';

export const apiRoutes: readonly RouteDef[] = [
  ...projectRoutes,
  ...deviceRoutes,
  ...portRoutes,
  ...virtualNetworkRoutes,
  ...vrfRoutes,
  ...ipReservationRoutes,
  ...metalGatewayRoutes,
  ...bgpRoutes,
];
