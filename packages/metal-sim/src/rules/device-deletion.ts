import type { DeviceState } from '../models.js';
import { violation, type RuleViolation } from './rule.js';

export const DEVICE_DELETE_STATE_RULE = 'device-delete-state';
export const DEVICE_DEPROVISIONING_RULE = 'device-deprovisioning';

/**
 * Deleting a device: a locked one must be unlocked first (spec: Device.locked "Prevents accidental
 * deletion of this resource"); one being provisioned is refused with the API's own words "Cannot
 * delete a device while it is provisioning" (seen by redhat-cop/agnosticd#4307); one already
 * deprovisioning is refused too (a guess: the API's answer to a second DELETE is not documented).
 */
export function checkDeviceDeletable(input: {
  readonly hostname: string;
  readonly state: DeviceState;
  readonly locked: boolean;
}): RuleViolation | null {
  if (input.locked) return violation(DEVICE_DELETE_STATE_RULE, `device ${input.hostname} is locked; unlock it before deleting`);
  if (input.state === 'provisioning') return violation(DEVICE_DELETE_STATE_RULE, 'Cannot delete a device while it is provisioning');
  if (input.state === 'deprovisioning') {
    return violation(DEVICE_DELETE_STATE_RULE, `device ${input.hostname} is already deprovisioning`);
  }
  return null;
}

/** A device on its way out takes no more changes (updateDevice, IP assignments): a guess, the docs are silent. */
export function checkNotDeprovisioning(input: { readonly hostname: string; readonly state: DeviceState }): RuleViolation | null {
  if (input.state !== 'deprovisioning') return null;
  return violation(DEVICE_DEPROVISIONING_RULE, `device ${input.hostname} is deprovisioning; it takes no more changes`);
}
