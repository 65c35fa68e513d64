import { expect } from '@jest/globals';
import { ContractValidator, defaultSpecPath, specAvailable, type ContractReport, type ContractViolation } from '@metal-l2/metal-sim';

// The Metal OpenAPI contract for every suite that runs the simulator (the IPAM, fixture, client and
// end-to-end suites): one validator per file, watching every request and response, and one check
// after the file that fails on any violation, whoever made it (our controllers, the CAPP fixture
// or CAPP itself, the simulator's answers). A missing spec fails the file as the simulator's own
// contract suite does; METAL_L2_NO_CONTRACT=1 is the only way to run without the checks.

export const CONTRACT_OPT_OUT = 'METAL_L2_NO_CONTRACT';

function optedOut(): boolean {
  return process.env[CONTRACT_OPT_OUT] === '1';
}

/** True only when METAL_L2_NO_CONTRACT=1 and the spec is missing: the one case nothing is checked. */
export function contractNotChecked(specPath: string = defaultSpecPath()): boolean {
  return optedOut() && !specAvailable(specPath);
}

function missingSpecMessage(specPath: string): string {
  return (
    `the Metal OpenAPI spec is missing at ${specPath} (clone ../shared beside the repository or set METAL_L2_SHARED); ` +
    `${CONTRACT_OPT_OUT}=1 runs without the contract checks`
  );
}

/**
 * The validator for a file's simulator, as `startSimulator` options. Throws when the spec is
 * missing, unless METAL_L2_NO_CONTRACT=1 opts out (then no validator, and the check below says so).
 */
export async function loadContract(specPath: string = defaultSpecPath()): Promise<{ contract?: ContractValidator }> {
  if (specAvailable(specPath)) return { contract: await ContractValidator.load(specPath) };
  if (optedOut()) return {};
  throw new Error(missingSpecMessage(specPath));
}

function describeViolation(v: ContractViolation): string {
  const status = v.status === undefined ? '' : ` -> ${v.status}`;
  const where = `${v.direction} ${v.method} ${v.path}${status} (${v.operationId ?? 'no operation'})`;
  return [where, ...v.messages.map((m) => `    ${m}`)].join('\n');
}

/** The report's violations, one block each: direction, call, operation, then what broke the spec. */
export function formatViolations(violations: readonly ContractViolation[]): string {
  return violations.map((v, i) => `  ${i + 1}. ${describeViolation(v)}`).join('\n');
}

/** A violation a test makes on purpose, and why. */
export interface ContractWaiver {
  readonly why: string;
  readonly matches: (violation: ContractViolation) => boolean;
}

/**
 * Fails when any call the validator saw broke the spec, listing them readably, or when no
 * validator ran although the checks are on. Returns the report (undefined only when opted out and
 * the spec is missing: nothing was checked, and stderr says so).
 */
export function expectNoContractViolations(
  contract: ContractValidator | undefined,
  options: {
    readonly what?: string;
    readonly minRequests?: number;
    /** Violations a test makes on purpose (what CAPP sends outside the spec), each with its reason. */
    readonly waive?: readonly ContractWaiver[];
  } = {},
): ContractReport | undefined {
  const what = options.what ?? expect.getState().testPath?.split('/').pop() ?? 'this file';
  if (contract === undefined) {
    const specPath = defaultSpecPath();
    if (contractNotChecked(specPath)) {
      process.stderr.write(`metal contract not checked for ${what} (${CONTRACT_OPT_OUT}=1): the spec is missing at ${specPath}\n`);
      return undefined;
    }
    throw new Error(
      `no contract validator watched ${what}'s Metal calls: ${specAvailable(specPath) ? 'the simulator was started without one (use loadContract())' : missingSpecMessage(specPath)}`,
    );
  }
  const report = contract.report();
  const waivers = options.waive ?? [];
  const unexpected = report.violations.filter((v) => !waivers.some((w) => w.matches(v)));
  for (const w of waivers) {
    const count = report.violations.filter((v) => w.matches(v)).length;
    if (count > 0) process.stderr.write(`metal contract: ${count} violation(s) of ${what} waived: ${w.why}\n`);
  }
  if (unexpected.length > 0) {
    throw new Error(
      `${unexpected.length} Metal API contract violation(s) in ${what} (spec ${report.specPath}):\n${formatViolations(unexpected)}`,
    );
  }
  const min = options.minRequests ?? 1;
  if (report.requestsValidated < min) {
    throw new Error(
      `the contract validator saw ${report.requestsValidated} request(s) of ${what}, expected at least ${min}: is it wired to the simulator?`,
    );
  }
  return report;
}
