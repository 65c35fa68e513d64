import { violation, type RuleViolation } from './rule.js';

export const USER_STATE_RULE = 'user-state-event';

/** Docs (user state): state is running, succeeded or failed; code an integer 1000-1099 inclusive. */
export function checkUserStateEvent(input: { readonly state: unknown; readonly code: unknown }): RuleViolation | null {
  if (input.state !== 'running' && input.state !== 'succeeded' && input.state !== 'failed') {
    return violation(USER_STATE_RULE, 'state must be one of running, succeeded, failed');
  }
  if (typeof input.code !== 'number' || !Number.isInteger(input.code) || input.code < 1000 || input.code > 1099) {
    return violation(USER_STATE_RULE, 'code must be an integer between 1000 and 1099');
  }
  return null;
}
