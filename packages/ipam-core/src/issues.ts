/**
 * Validation results as values (zod style): a closed set of codes, a path into the object that was
 * checked and a readable message. The pool webhook turns them into a 422 and the pool reconciler into
 * a condition message, so both say the same thing in the same words.
 */

/** Every code ipam-core reports. Codes are never renamed: webhooks, conditions and alerts match on them. */
export const IssueCode = {
  /** A required field is empty (`spec.addresses`). */
  Required: 'Required',
  /** An entry is not an IP address, an `a-b` range or a CIDR (or a range runs backwards). */
  InvalidAddress: 'InvalidAddress',
  /** The prefix is not an integer in 0..128, or longer than the family allows. */
  InvalidPrefix: 'InvalidPrefix',
  /** IPv4 and IPv6 entries in the same list. */
  MixedFamilies: 'MixedFamilies',
  /** The gateway is of another family than the addresses. */
  GatewayFamilyMismatch: 'GatewayFamilyMismatch',
  /** `excludedAddresses` is of another family than `addresses`. */
  ExcludedFamilyMismatch: 'ExcludedFamilyMismatch',
  /** An entry of `addresses` does not lie inside (first address)/prefix. */
  OutsidePrefix: 'OutsidePrefix',
  /** The gateway does not lie inside the pool's subnet (the reference provider accepts this; we refuse it). */
  GatewayOutsideSubnet: 'GatewayOutsideSubnet',
  /** `addressReuseGracePeriodSeconds` is negative or not an integer. */
  InvalidGracePeriod: 'InvalidGracePeriod',
  /** A status allocation entry cannot be decoded. */
  InvalidAllocation: 'InvalidAllocation',
  /** Two status allocation entries name the same address once normalised. */
  DuplicateAllocation: 'DuplicateAllocation',
  /** Two pools can hand out (or use as gateway) the same address. */
  PoolOverlap: 'PoolOverlap',
  /** An allocated address would leave the pool's allocatable set. */
  AllocatedAddressOutsidePool: 'AllocatedAddressOutsidePool',
} as const;

export type IssueCode = (typeof IssueCode)[keyof typeof IssueCode];

/** One path step: a field name or a list index, relative to the checked object (e.g. `spec`). */
export type IssuePathSegment = string | number;

export interface Issue {
  readonly code: IssueCode;
  /** Where the problem is, relative to the checked object: `['addresses', 2]`. Empty for the whole object. */
  readonly path: readonly IssuePathSegment[];
  /** Lower-case sentence saying what is wrong, without the path. */
  readonly message: string;
  /** The offending value as the user wrote it, when there is a single one. */
  readonly value?: string | number;
}

export interface FormatIssueOptions {
  /** Path prefix to prepend, e.g. `spec` for a pool spec or `status` for its allocations. */
  readonly root?: string;
}

/** `['addresses', 2]` with root `spec` → `spec.addresses[2]`. */
export function formatIssuePath(path: readonly IssuePathSegment[], options: FormatIssueOptions = {}): string {
  let out = options.root ?? '';
  for (const segment of path) {
    if (typeof segment === 'number') {
      out += `[${segment}]`;
    } else if (isPlainFieldName(segment)) {
      out += out === '' ? segment : `.${segment}`;
    } else {
      // Map keys such as addresses contain dots and colons; bracket them so the path stays unambiguous.
      out += `[${JSON.stringify(segment)}]`;
    }
  }
  return out;
}

/**
 * Formats one issue the way the API server formats field errors, so webhook denials read like
 * built-in validation: `spec.addresses[2]: Invalid value: "garbage": provided address is not ...`.
 */
export function formatIssue(issue: Issue, options: FormatIssueOptions = {}): string {
  const path = formatIssuePath(issue.path, options);
  const value = issue.value === undefined ? '' : `Invalid value: ${JSON.stringify(issue.value)}: `;
  const where = path === '' ? '' : `${path}: `;
  return `${where}${value}${issue.message}`;
}

/** Formats a list of issues as one message (conditions have one message field). */
export function formatIssues(issues: readonly Issue[], options: FormatIssueOptions = {}): string {
  return issues.map((issue) => formatIssue(issue, options)).join('; ');
}

function isPlainFieldName(segment: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(segment);
}
