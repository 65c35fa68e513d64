import { violation, type RuleViolation } from './rule.js';

export const BATCH_IN_PROGRESS_RULE = 'one-batch-per-port';

/** One VLAN assignment batch at a time per port: a second one waits until the first has finished. */
export function checkNoBatchInProgress(input: { readonly port: string; readonly openBatchIds: readonly string[] }): RuleViolation | null {
  if (input.openBatchIds.length === 0) return null;
  return violation(
    BATCH_IN_PROGRESS_RULE,
    `port ${input.port} already has a VLAN assignment batch in progress (${input.openBatchIds.join(', ')})`,
  );
}
