// Holds the simulator to the official OpenAPI spec: every request it receives and every response it
// sends can be checked against ../shared/equinix-metal-openapi/openapi3.yaml with openapi-backend
// (quick mode: schemas compile lazily, so loading the 560 kB spec takes well under a second).
// Findings are recorded, not thrown, so a test can assert "zero violations" and report counts.
//
// openapi-backend and ajv-formats are the workspace's dev tools; they are loaded only when a
// validator is loaded (in a worker thread, see contract-worker.ts), so the simulator runs without them.

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import { WORKER_SOURCE } from './contract-worker.js';

export interface ContractRequest {
  readonly method: string;
  /** Full path, with the /metal/v1 prefix. */
  readonly path: string;
  /** The raw query string, without `?`. */
  readonly rawQuery: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: unknown;
}

export interface ContractResponse {
  readonly operationId: string;
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly body: unknown;
}

export interface ContractViolation {
  readonly direction: 'request' | 'response';
  readonly operationId: string | undefined;
  readonly method: string;
  readonly path: string;
  readonly status?: number;
  readonly messages: readonly string[];
}

/** A finding caused by a known defect of the spec itself, counted apart from violations. */
export interface WaivedFinding extends ContractViolation {
  readonly reason: string;
}

export interface ContractReport {
  readonly specPath: string;
  readonly requestsValidated: number;
  readonly responsesValidated: number;
  /** Responses not checked because a fault rule produced them (429/5xx the spec does not list). */
  readonly responsesSkipped: number;
  readonly violations: readonly ContractViolation[];
  readonly waived: readonly WaivedFinding[];
}

/** The repository root, from this file's place in packages/metal-sim/{src,dist}/. */
function repoRoot(): string {
  return fileURLToPath(new URL('../../../', import.meta.url));
}

/** Where the spec lives in a full checkout: ../shared next to the repository. */
/** The spec in the shared folder beside the clone; METAL_L2_SHARED moves that folder, as for the tests' CRDs. */
export function defaultSpecPath(): string {
  const shared = process.env['METAL_L2_SHARED'];
  if (shared !== undefined && shared !== '') return join(shared, 'equinix-metal-openapi', 'openapi3.yaml');
  return fileURLToPath(new URL('../shared/equinix-metal-openapi/openapi3.yaml', `file://${repoRoot()}`));
}

export function specAvailable(path: string = defaultSpecPath()): boolean {
  return existsSync(path);
}

/** The shape of one ajv error as openapi-backend reports it. */
interface AjvErrorLike {
  readonly instancePath?: string;
  readonly keyword?: string;
  readonly message?: string;
  readonly params?: Record<string, unknown>;
}

function describe(e: AjvErrorLike): string {
  return `${e.instancePath === undefined || e.instancePath === '' ? '(root)' : e.instancePath} ${e.message ?? e.keyword ?? 'invalid'}${
    e.params === undefined ? '' : ` ${JSON.stringify(e.params)}`
  }`;
}

/**
 * Known spec defect: createMetalGateway's body is `oneOf(MetalGatewayCreateInput,
 * VrfMetalGatewayCreateInput)`, and any body with `ip_reservation_id` satisfies both, so a valid
 * request fails "must match exactly one schema". Such a oneOf (more than one branch passing) is
 * waived; a oneOf that no branch passes is still a violation.
 */
function isAmbiguousOneOf(e: AjvErrorLike): boolean {
  const passing = e.params?.['passingSchemas'];
  return e.keyword === 'oneOf' && Array.isArray(passing) && passing.length > 1;
}

/** What the worker answers; `failure` when it could not do what was asked. */
interface WorkerAnswer {
  readonly seq?: number;
  readonly ready?: boolean;
  readonly failure?: string;
  readonly operationId?: string;
  readonly known?: boolean;
  readonly declared?: boolean;
  readonly errors?: readonly AjvErrorLike[];
}

const CALL_TIMEOUT_MS = 30_000;

export class ContractValidator {
  private seq = 0;
  private requests = 0;
  private responses = 0;
  private skipped = 0;
  private violations: ContractViolation[] = [];
  private waived: WaivedFinding[] = [];

  private readonly worker: Worker;
  private readonly port: MessagePort;
  private readonly flag: Int32Array;
  readonly specPath: string;

  private constructor(parts: { worker: Worker; port: MessagePort; flag: Int32Array; specPath: string }) {
    this.worker = parts.worker;
    this.port = parts.port;
    this.flag = parts.flag;
    this.specPath = parts.specPath;
  }

  /** Loads and prepares the spec in a worker thread; rejects when the file is missing or unreadable. */
  static async load(specPath: string = defaultSpecPath()): Promise<ContractValidator> {
    if (!existsSync(specPath)) throw new Error(`the OpenAPI spec is missing at ${specPath}`);
    const { port1, port2 } = new MessageChannel();
    const flag = new Int32Array(new SharedArrayBuffer(4));
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { port: port2, flag, specPath, resolveFrom: fileURLToPath(import.meta.url) },
      transferList: [port2],
    });
    worker.unref();
    const ready = await new Promise<WorkerAnswer>((resolve, reject) => {
      port1.once('message', (m: WorkerAnswer) => resolve(m));
      worker.once('error', reject);
    });
    if (ready.failure !== undefined) {
      await worker.terminate();
      throw new Error(`loading the OpenAPI spec failed: ${ready.failure}`);
    }
    port1.unref();
    return new ContractValidator({ worker, port: port1, flag, specPath });
  }

  /** Stops the worker thread. */
  async close(): Promise<void> {
    this.port.close();
    await this.worker.terminate();
  }

  /**
   * A synchronous round trip to the worker (well under a millisecond per call once a schema is
   * compiled): post the call with a fresh sequence number, sleep on the shared flag until the worker
   * has set it to that number, then take the answer off the port.
   */
  private call(message: Record<string, unknown>): WorkerAnswer {
    const seq = ++this.seq;
    this.port.postMessage({ ...message, seq });
    const deadline = Date.now() + CALL_TIMEOUT_MS;
    for (;;) {
      const seen = Atomics.load(this.flag, 0);
      if (seen === seq) break;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`contract worker did not answer within ${CALL_TIMEOUT_MS} ms`);
      Atomics.wait(this.flag, 0, seen, left);
    }
    for (;;) {
      const answer = receiveMessageOnPort(this.port)?.message as WorkerAnswer | undefined;
      if (answer === undefined) throw new Error('contract worker signalled without an answer');
      if (answer.seq !== seq) continue; // an answer to a call that timed out earlier
      if (answer.failure !== undefined) throw new Error(`contract worker failed: ${answer.failure}`);
      return answer;
    }
  }

  /** The operationId the spec has for this call, if any. */
  operationFor(method: string, path: string): string | undefined {
    return this.call({ kind: 'match', method, path }).operationId;
  }

  validateRequest(req: ContractRequest): void {
    this.requests++;
    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers[k.toLowerCase()] = v;
    const answer = this.call({
      kind: 'request',
      method: req.method,
      path: req.path,
      headers,
      query: req.rawQuery,
      hasBody: req.body !== undefined,
      body: req.body,
    });
    if (answer.operationId === undefined) {
      this.violations.push({
        direction: 'request',
        operationId: undefined,
        method: req.method,
        path: req.path,
        messages: ['no operation in the spec for this method and path'],
      });
      return;
    }
    this.record({ direction: 'request', operationId: answer.operationId, method: req.method, path: req.path }, answer.errors ?? []);
  }

  validateResponse(res: ContractResponse): void {
    this.responses++;
    const where = { direction: 'response' as const, operationId: res.operationId, method: res.method, path: res.path, status: res.status };
    const answer = this.call({ kind: 'response', operationId: res.operationId, status: res.status, body: res.body });
    if (answer.known !== true) {
      this.violations.push({ ...where, messages: [`operation ${res.operationId} is not in the spec`] });
      return;
    }
    if (answer.declared !== true) {
      // Every operation is behind the x_auth_token scheme, so 401 applies to all of them even
      // where the spec forgot to list it; so does 429, the API's rate limit (the spec lists it on
      // two operations only). Check the body against Error by hand.
      if ((res.status === 401 || res.status === 429) && isErrorBody(res.body)) return;
      this.violations.push({ ...where, messages: [`status ${res.status} is not a documented response of ${res.operationId}`] });
      return;
    }
    this.record(where, answer.errors ?? []);
  }

  /**
   * A call the simulator has no route for: if the spec has the operation, the simulator is missing
   * it, and that is recorded as a violation (the 404 it answers would otherwise pass as documented).
   */
  noteUnserved(method: string, path: string): void {
    const operationId = this.operationFor(method, path);
    if (operationId === undefined) return;
    this.violations.push({
      direction: 'response',
      operationId,
      method,
      path,
      messages: [`operation ${operationId} is in the spec but the simulator does not serve it`],
    });
  }

  /** Counts a response a fault produced; it is not held to the spec. */
  skipResponse(): void {
    this.skipped++;
  }

  report(): ContractReport {
    return {
      specPath: this.specPath,
      requestsValidated: this.requests,
      responsesValidated: this.responses,
      responsesSkipped: this.skipped,
      violations: [...this.violations],
      waived: [...this.waived],
    };
  }

  reset(): void {
    this.requests = 0;
    this.responses = 0;
    this.skipped = 0;
    this.violations = [];
    this.waived = [];
  }

  private record(where: Omit<ContractViolation, 'messages'>, errors: readonly AjvErrorLike[]): void {
    const waived = errors.filter(isAmbiguousOneOf);
    const real = errors.filter((e) => !isAmbiguousOneOf(e));
    if (waived.length > 0) {
      this.waived.push({
        ...where,
        messages: waived.map(describe),
        reason: 'spec defect: oneOf with more than one matching branch (createMetalGateway body)',
      });
    }
    if (real.length > 0) this.violations.push({ ...where, messages: real.map(describe) });
  }
}

function isErrorBody(body: unknown): boolean {
  if (typeof body !== 'object' || body === null) return false;
  const b = body as Record<string, unknown>;
  return typeof b['error'] === 'string' || (Array.isArray(b['errors']) && b['errors'].every((e) => typeof e === 'string'));
}
