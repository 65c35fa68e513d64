// Fault injection: rules that make matching calls answer 429 with Retry-After, answer 5xx, wait
// first, or drop the connection, and rules that let a VLAN assignment batch be accepted and then
// end `failed` (what no call-level fault can make Metal do). Rules match by operationId and/or method and path pattern, and
// fire always, with a probability (dice from a PRNG seeded like the ids, so a seeded run fails the
// same calls every time), for the next N matching calls, or both.

import { Prng } from './ids.js';
import { unknownKeysProblem } from './known-keys.js';

export type FaultKind = 'rate-limit' | 'server-error' | 'latency' | 'drop' | 'batch-failed';

/** The only call a batch-failed rule can match: the one that creates a VLAN assignment batch. */
export const BATCH_CREATE = { operationId: 'createPortVlanAssignmentBatch', method: 'POST' } as const;

const DEFAULT_BATCH_FAILURE = 'VLAN assignment failed (injected)';

export interface FaultRuleInput {
  readonly fault: FaultKind;
  /** Match the spec's operationId (e.g. `assignPort`). */
  readonly operationId?: string;
  /** Match the HTTP method. */
  readonly method?: string;
  /**
   * Match the path below `/metal/v1` (or the full path for other paths, e.g. `/metadata/**`):
   * `*` or `{name}` is one segment, `**` any rest, so spec templates paste as is.
   */
  readonly path?: string;
  /** server-error: the status, 500-599 (default 500). */
  readonly status?: number;
  /** rate-limit: the Retry-After value in seconds (default 1). */
  readonly retryAfterSeconds?: number;
  /** latency: how long to wait before answering, in real milliseconds (default 1000). */
  readonly latencyMs?: number;
  /** Fire with this probability (0-1) on each matching call. */
  readonly probability?: number;
  /** Fire on the next N matching calls only, then the rule is spent. */
  readonly times?: number;
  /** rate-limit/server-error: answer with an HTML page, as a load balancer in front of the API does. */
  readonly html?: boolean;
  /** batch-failed: the batch's `error_messages` entry (default "VLAN assignment failed (injected)"). */
  readonly message?: string;
}

export interface FaultRule extends FaultRuleInput {
  readonly id: string;
  /** Matching calls seen. */
  matched: number;
  /** Calls it fired on. */
  fired: number;
  /** Firings left when `times` was given. */
  remaining: number | undefined;
}

export type TerminalFault =
  | { readonly kind: 'rate-limit'; readonly ruleId: string; readonly retryAfterSeconds: number; readonly html: boolean }
  | { readonly kind: 'server-error'; readonly ruleId: string; readonly status: number; readonly html: boolean }
  | { readonly kind: 'drop'; readonly ruleId: string };

export interface FaultDecision {
  /** Total injected wait before the answer (latency rules add up). */
  readonly latencyMs: number;
  readonly latencyRuleIds: readonly string[];
  /** The answer that replaces the real one, if any. */
  readonly terminal: TerminalFault | undefined;
}

export interface FaultTarget {
  readonly operationId: string | undefined;
  readonly method: string;
  /** Path below /metal/v1 for API calls; the full path otherwise. */
  readonly path: string;
}

export class FaultSpecError extends Error {
  override readonly name = 'FaultSpecError';
}

const KINDS: readonly FaultKind[] = ['rate-limit', 'server-error', 'latency', 'drop', 'batch-failed'];

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const MATCH_KEYS = ['operationId', 'method', 'path'] as const;

/** Numeric fields: their range, and the kinds they mean something for (undefined: every kind). */
const NUMBER_FIELDS: Readonly<Record<string, { readonly min: number; readonly max: number; readonly kinds?: readonly FaultKind[] }>> = {
  status: { min: 500, max: 599, kinds: ['server-error'] },
  retryAfterSeconds: { min: 0, max: 86_400, kinds: ['rate-limit'] },
  latencyMs: { min: 0, max: 600_000, kinds: ['latency'] },
  probability: { min: 0, max: 1 },
  times: { min: 1, max: Number.MAX_SAFE_INTEGER },
};

const HTML_KINDS: readonly FaultKind[] = ['rate-limit', 'server-error'];

const RULE_KEYS: readonly string[] = ['fault', ...MATCH_KEYS, ...Object.keys(NUMBER_FIELDS), 'html', 'message'];

/** A field given for a kind it does nothing for is refused: it is a mistake, not an option. */
function checkApplies(field: string, fault: FaultKind, kinds: readonly FaultKind[] | undefined): void {
  if (kinds !== undefined && !kinds.includes(fault)) {
    throw new FaultSpecError(`${field} applies to ${kinds.join(' and ')} rules only, not ${fault}`);
  }
}

/** A batch-failed rule naming another operation or method could never fire: refused, not armed. */
function checkBatchTarget(rule: Record<string, unknown>, where: string): void {
  for (const key of ['operationId', 'method'] as const) {
    const v = rule[key];
    if (typeof v === 'string' && v !== BATCH_CREATE[key]) {
      throw new FaultSpecError(`${where}: batch-failed rules match ${BATCH_CREATE[key]} only, not ${v}`);
    }
  }
}

/** Checks one rule as read from JSON/YAML (admin endpoint body, --faults file) or given in process. */
export function parseFaultRule(raw: unknown, where = 'fault'): FaultRuleInput {
  if (!isRecord(raw)) throw new FaultSpecError(`${where} must be an object`);
  const unknown = unknownKeysProblem(raw, RULE_KEYS, where);
  if (unknown !== undefined) throw new FaultSpecError(unknown);
  const fault = raw['fault'];
  if (typeof fault !== 'string' || !KINDS.includes(fault as FaultKind))
    throw new FaultSpecError(`${where}.fault must be one of ${KINDS.join(', ')}`);
  const kind = fault as FaultKind;
  const out: Record<string, unknown> = { fault };
  for (const key of MATCH_KEYS) {
    const v = raw[key];
    if (v === undefined) continue;
    if (typeof v !== 'string' || v === '') throw new FaultSpecError(`${where}.${key} must be a non-empty string`);
    out[key] = key === 'method' ? v.toUpperCase() : v;
  }
  for (const [key, { min, max, kinds }] of Object.entries(NUMBER_FIELDS)) {
    const v = raw[key];
    if (v === undefined) continue;
    if (typeof v !== 'number' || Number.isNaN(v) || v < min || v > max || (key !== 'probability' && !Number.isInteger(v))) {
      throw new FaultSpecError(`${where}.${key} must be a number from ${min} to ${max}`);
    }
    checkApplies(`${where}.${key}`, kind, kinds);
    out[key] = v;
  }
  if (raw['html'] !== undefined) {
    if (typeof raw['html'] !== 'boolean') throw new FaultSpecError(`${where}.html must be a boolean`);
    checkApplies(`${where}.html`, kind, HTML_KINDS);
    out['html'] = raw['html'];
  }
  if (raw['message'] !== undefined) {
    if (typeof raw['message'] !== 'string' || raw['message'] === '')
      throw new FaultSpecError(`${where}.message must be a non-empty string`);
    checkApplies(`${where}.message`, kind, ['batch-failed']);
    out['message'] = raw['message'];
  }
  if (kind === 'batch-failed') checkBatchTarget(out, where);
  return out as unknown as FaultRuleInput;
}

/** A list of rules, or `{faults: [...]}`, or one rule. */
export function parseFaultRules(doc: unknown): FaultRuleInput[] {
  let list: unknown[];
  if (Array.isArray(doc)) list = doc;
  else if (isRecord(doc) && 'faults' in doc) {
    const unknown = unknownKeysProblem(doc, ['faults'], 'the fault document');
    if (unknown !== undefined) throw new FaultSpecError(unknown);
    if (!Array.isArray(doc['faults'])) throw new FaultSpecError('faults must be a list of rules');
    list = doc['faults'];
  } else list = [doc];
  return list.map((r: unknown, i: number) => parseFaultRule(r, `faults[${i}]`));
}

function matchesPath(pattern: string, path: string): boolean {
  const want = pattern.split('/').filter((s) => s !== '');
  const got = path.split('/').filter((s) => s !== '');
  for (let i = 0; i < want.length; i++) {
    const w = want[i];
    if (w === '**') return true;
    const g = got[i];
    if (g === undefined) return false;
    if (w === '*' || (w?.startsWith('{') === true && w.endsWith('}'))) continue;
    if (w !== g) return false;
  }
  return want.length === got.length;
}

export class FaultInjector {
  private readonly prng: Prng;
  private rules: FaultRule[] = [];
  private nextId = 1;

  constructor(seed: string) {
    this.prng = new Prng(`${seed}:faults`);
  }

  add(input: FaultRuleInput): FaultRule {
    const rule: FaultRule = { ...parseFaultRule(input), id: `fault-${this.nextId++}`, matched: 0, fired: 0, remaining: input.times };
    this.rules.push(rule);
    return rule;
  }

  list(): readonly FaultRule[] {
    return this.rules;
  }

  remove(id: string): boolean {
    const before = this.rules.length;
    this.rules = this.rules.filter((r) => r.id !== id);
    return this.rules.length !== before;
  }

  clear(): void {
    this.rules = [];
  }

  /** Decides what happens to one call; counts matches and firings. */
  decide(target: FaultTarget): FaultDecision {
    let latencyMs = 0;
    const latencyRuleIds: string[] = [];
    let terminal: TerminalFault | undefined;
    for (const rule of this.rules) {
      // Those act on the batch a call creates, once it was accepted (batchFailure).
      if (rule.fault === 'batch-failed' || !this.matches(rule, target)) continue;
      // A latency rule stacks; once a terminal fault is chosen, later terminal rules do not roll.
      if (rule.fault !== 'latency' && terminal !== undefined) continue;
      rule.matched++;
      if (rule.remaining !== undefined && rule.remaining <= 0) continue;
      if (rule.probability !== undefined && this.prng.nextFloat() >= rule.probability) continue;
      rule.fired++;
      if (rule.remaining !== undefined) rule.remaining--;
      switch (rule.fault) {
        case 'latency':
          latencyMs += rule.latencyMs ?? 1000;
          latencyRuleIds.push(rule.id);
          break;
        case 'rate-limit':
          terminal = { kind: 'rate-limit', ruleId: rule.id, retryAfterSeconds: rule.retryAfterSeconds ?? 1, html: rule.html ?? false };
          break;
        case 'server-error':
          terminal = { kind: 'server-error', ruleId: rule.id, status: rule.status ?? 500, html: rule.html ?? false };
          break;
        case 'drop':
          terminal = { kind: 'drop', ruleId: rule.id };
          break;
      }
    }
    return { latencyMs, latencyRuleIds, terminal };
  }

  /**
   * Called once a VLAN assignment batch passed every check and is about to be created: the error
   * message it must end `failed` with, if the first matching batch-failed rule fires. A call
   * refused before that (a 422, a fault's answer) leaves the rules untouched.
   */
  batchFailure(target: FaultTarget): { readonly ruleId: string; readonly message: string } | undefined {
    for (const rule of this.rules) {
      if (rule.fault !== 'batch-failed' || !this.matches(rule, target)) continue;
      rule.matched++;
      if (rule.remaining !== undefined && rule.remaining <= 0) continue;
      if (rule.probability !== undefined && this.prng.nextFloat() >= rule.probability) continue;
      rule.fired++;
      if (rule.remaining !== undefined) rule.remaining--;
      return { ruleId: rule.id, message: rule.message ?? DEFAULT_BATCH_FAILURE };
    }
    return undefined;
  }

  private matches(rule: FaultRule, t: FaultTarget): boolean {
    if (rule.operationId !== undefined && rule.operationId !== t.operationId) return false;
    if (rule.method !== undefined && rule.method !== t.method) return false;
    if (rule.path !== undefined && !matchesPath(rule.path, t.path)) return false;
    return true;
  }
}
