// The admission.k8s.io/v1 AdmissionReview as a webhook handler sees it: the request it reads and
// the verdict it returns. The server (admission-server.ts) turns a verdict into the wire response.

/** The part of an AdmissionReview request a handler reads. */
export interface AdmissionRequest {
  readonly uid: string;
  readonly operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
  readonly kind: { readonly group: string; readonly version: string; readonly kind: string };
  readonly namespace?: string;
  readonly name?: string;
  readonly object?: unknown;
  readonly oldObject?: unknown;
  /** A dry run: the handler must have no side effects (webhooks declare sideEffects: None anyway). */
  readonly dryRun?: boolean;
}

/** One RFC 6902 operation; `path` is a JSON pointer (escape segments with escapeJsonPointer). */
export interface JsonPatchOperation {
  readonly op: 'add' | 'remove' | 'replace' | 'test';
  readonly path: string;
  readonly value?: unknown;
}

/**
 * What a handler decides. Warnings are shown to the user by kubectl (and returned to API clients
 * as Warning headers) whether or not the request is allowed; keep each under 120 characters.
 */
export type AdmissionVerdict =
  | { readonly allowed: true; readonly patch?: readonly JsonPatchOperation[]; readonly warnings?: readonly string[] }
  | { readonly allowed: false; readonly message: string; readonly warnings?: readonly string[] };

/**
 * Called once per AdmissionReview sent to its path. May throw: the server then denies the request
 * with the error's message (fail closed).
 */
export type AdmissionHandler = (request: AdmissionRequest) => Promise<AdmissionVerdict> | AdmissionVerdict;

/** The AdmissionResponse for a verdict, as the API server expects it in the AdmissionReview. */
export function admissionResponse(uid: string, verdict: AdmissionVerdict): Record<string, unknown> {
  const response: Record<string, unknown> = { uid, allowed: verdict.allowed };
  if (!verdict.allowed) response['status'] = { code: 403, reason: 'Forbidden', message: verdict.message };
  if (verdict.allowed && verdict.patch !== undefined && verdict.patch.length > 0) {
    response['patchType'] = 'JSONPatch';
    response['patch'] = Buffer.from(JSON.stringify(verdict.patch)).toString('base64');
  }
  if (verdict.warnings !== undefined && verdict.warnings.length > 0) response['warnings'] = [...verdict.warnings];
  return response;
}

/**
 * One JSON-pointer segment (RFC 6901): `~` becomes `~0`, `/` becomes `~1`. Annotation keys carry
 * a `/`, so `/metadata/annotations/${escapeJsonPointer('cluster.x-k8s.io/paused')}`.
 */
export function escapeJsonPointer(segment: string): string {
  return segment.replaceAll('~', '~0').replaceAll('/', '~1');
}
