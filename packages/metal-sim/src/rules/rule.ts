// Rules are pure functions of plain inputs: they return a violation or null and never touch the
// store, so each can be tested alone and read as the documented statement it encodes.

/** A refused operation: the rule's stable name and a message for the API's `errors[]`. */
export interface RuleViolation {
  readonly rule: string;
  readonly message: string;
}

export function violation(rule: string, message: string): RuleViolation {
  return { rule, message };
}
