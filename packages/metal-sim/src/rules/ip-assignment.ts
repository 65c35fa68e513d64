import type { DeviceState } from '../models.js';
import { keepsLayer3, type NetworkType } from '../network-type.js';
import { violation, type RuleViolation } from './rule.js';

export const IP_ASSIGNMENT_DEVICE_STATE_RULE = 'ip-assignment-device-state';
export const IP_ASSIGNMENT_LAYER3_RULE = 'ip-assignment-needs-layer3';

/**
 * An elastic or reserved address is routed to the device's layer-3 bond (bond0): the docs' hybrid
 * unbonded mode keeps "the elastic IPs assigned to the bonded Layer 3 interface", and the layer-2
 * modes "permanently remove the server's management IP addresses" (docs-packet-legacy#568). So a
 * device whose bond0 is in layer 2 (layer2-bonded, layer2-individual) takes no assignment; layer3,
 * hybrid and hybrid-bonded do. The device must be active (a guess that matches CAPP, which assigns
 * its VIP only once the device is active); queued, provisioning, deprovisioning and failed are refused.
 */
export function checkIpAssignable(input: {
  readonly hostname: string;
  readonly address: string;
  readonly state: DeviceState;
  readonly bond0Type: NetworkType;
}): RuleViolation | null {
  if (input.state !== 'active') {
    return violation(
      IP_ASSIGNMENT_DEVICE_STATE_RULE,
      `device ${input.hostname} is ${input.state}; ${input.address} can be assigned once it is active`,
    );
  }
  if (!keepsLayer3(input.bond0Type)) {
    return violation(
      IP_ASSIGNMENT_LAYER3_RULE,
      `device ${input.hostname} is in ${input.bond0Type} mode: bond0 has no layer 3 to route ${input.address} to (convert bond0 to layer 3 first)`,
    );
  }
  return null;
}
