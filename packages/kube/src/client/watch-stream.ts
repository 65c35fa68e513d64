import { createInterface } from 'node:readline';
import { kubeApiErrorFromResponse, type KubeApiError } from '../errors.js';
import type { KubeObject } from '../resource.js';
import type { HttpRequest, Transport } from './transport.js';

/**
 * One event of a watch stream. ERROR carries the Status the server sent, translated (a 410 in
 * there means the resourceVersion is too old: relist). BOOKMARK only moves the resourceVersion.
 */
export type WatchEvent<T extends KubeObject> =
  | { readonly type: 'ADDED' | 'MODIFIED' | 'DELETED'; readonly object: T }
  | { readonly type: 'BOOKMARK'; readonly resourceVersion: string }
  | { readonly type: 'ERROR'; readonly error: KubeApiError };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseEvent<T extends KubeObject>(line: string, action: string): WatchEvent<T> | undefined {
  const data = JSON.parse(line) as unknown;
  if (!isRecord(data) || typeof data['type'] !== 'string' || !isRecord(data['object'])) {
    throw new Error(`malformed watch event: ${line.slice(0, 200)}`);
  }
  const object = data['object'];
  switch (data['type']) {
    case 'ADDED':
    case 'MODIFIED':
    case 'DELETED':
      if (!isRecord(object['metadata'])) throw new Error(`watch event without metadata: ${line.slice(0, 200)}`);
      // The API server's schema for the kind is trusted beyond metadata.
      return { type: data['type'], object: object as unknown as T };
    case 'BOOKMARK': {
      const metadata = isRecord(object['metadata']) ? object['metadata'] : {};
      const rv = metadata['resourceVersion'];
      return typeof rv === 'string' ? { type: 'BOOKMARK', resourceVersion: rv } : undefined;
    }
    case 'ERROR': {
      const code = typeof object['code'] === 'number' ? object['code'] : 0;
      return { type: 'ERROR', error: kubeApiErrorFromResponse({ action, status: code, body: object }) };
    }
    default:
      return undefined;
  }
}

/**
 * Runs one watch request until the server ends it, the connection fails or `signal` aborts.
 * Resolves on a clean end or an abort; rejects with a KubeApiError for a non-200 answer, or with
 * the transport error when the connection breaks. `onEvent` runs synchronously per line, in order.
 */
export async function streamWatch<T extends KubeObject>(options: {
  transport: Transport;
  request: HttpRequest & { signal: AbortSignal };
  action: string;
  onEvent: (event: WatchEvent<T>) => void;
  /** Called once the server accepted the watch (HTTP 200), before any event. */
  onOpen?: (() => void) | undefined;
}): Promise<void> {
  const { transport, request, action, onEvent } = options;
  let response;
  try {
    response = await transport.stream(request);
  } catch (err: unknown) {
    if (request.signal.aborted) return;
    throw err;
  }
  const { body } = response;
  if (response.status !== 200) {
    const chunks: Buffer[] = [];
    for await (const chunk of body) chunks.push(chunk as Buffer);
    throw kubeApiErrorFromResponse({ action, status: response.status, body: Buffer.concat(chunks).toString('utf8') });
  }
  options.onOpen?.();
  await new Promise<void>((resolve, reject) => {
    let settled = false;
    const finish = (err?: unknown): void => {
      if (settled) return;
      settled = true;
      lines.close();
      body.destroy();
      if (err === undefined || request.signal.aborted) resolve();
      else reject(err instanceof Error ? err : new Error('watch failed', { cause: err }));
    };
    const lines = createInterface({ input: body, crlfDelay: Infinity });
    lines.on('line', (line) => {
      if (settled || line.trim() === '') return;
      try {
        const event = parseEvent<T>(line, action);
        if (event !== undefined) onEvent(event);
      } catch (err: unknown) {
        finish(err);
      }
    });
    body.on('error', (err) => finish(err));
    body.on('aborted', () => finish(new Error('watch connection aborted')));
    // 'end' means the server finished the chunked response (its timeout); 'close' without 'end'
    // means the connection went away. readline delivers buffered lines before 'close'.
    let ended = false;
    body.on('end', () => {
      ended = true;
    });
    lines.on('close', () => finish(ended ? undefined : new Error('watch connection closed before the response ended')));
  });
}
