// The facility a device sits in. The API retired facilities for metros, but kept returning a
// device's `facility` (id, code, name, features, metro) even for devices created in a metro, and
// clients read it: CAPP v0.9.0 dereferences `device.facility.code` on every reconcile of an active
// machine and panics without it. One facility per metro, named after a real one where we know it.

import { createHash } from 'node:crypto';
import type { Metro } from '../models.js';
import type { FacilityWire } from '../wire.js';
import { renderMetro } from './common.js';

/** Facility codes the API reported for devices in these metros; other metros get `<metro>1`. */
const KNOWN_FACILITIES: Readonly<Record<string, { code: string; name: string }>> = {
  da: { code: 'da11', name: 'Dallas DA11' },
  sv: { code: 'sv15', name: 'Silicon Valley SV15' },
  ny: { code: 'ny5', name: 'New York NY5' },
  am: { code: 'am6', name: 'Amsterdam AM6' },
  dc: { code: 'dc13', name: 'Washington DC13' },
  ch: { code: 'ch3', name: 'Chicago CH3' },
};

export function facilityCode(metroCode: string): string {
  return KNOWN_FACILITIES[metroCode]?.code ?? `${metroCode}1`;
}

/** A stable id derived from the metro's (the simulator keeps no facility objects). */
function facilityId(metro: Metro): string {
  const hex = createHash('sha256').update(`facility:${metro.id}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export function renderFacility(metro: Metro): FacilityWire {
  const known = KNOWN_FACILITIES[metro.code];
  return {
    id: facilityId(metro),
    code: facilityCode(metro.code),
    name: known?.name ?? `${metro.name} ${facilityCode(metro.code).toUpperCase()}`,
    features: ['baremetal', 'backend_transfer', 'layer_2', 'global_ipv4'],
    metro: renderMetro(metro),
  };
}
