import type { DeviceState } from '../models.js';
import { violation, type RuleViolation } from './rule.js';

export const DEVICE_ACTIVE_RULE = 'device-active';

/** Port changes need a provisioned device: the switch ports are not configured before it is active. */
export function checkDeviceActive(input: { readonly hostname: string; readonly state: DeviceState }): RuleViolation | null {
  if (input.state === 'active') return null;
  return violation(DEVICE_ACTIVE_RULE, `device ${input.hostname} is ${input.state}; port changes need an active device`);
}
