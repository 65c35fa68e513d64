import type { Writable } from 'node:stream';
import winston from 'winston';

/**
 * What libraries and reconcilers need from a logger: a fixed message plus fields, and children
 * that carry context. The winston logger createLogger returns satisfies it; tests may pass any
 * object that does.
 */
export interface Logger {
  error(msg: string, fields?: Record<string, unknown>): unknown;
  warn(msg: string, fields?: Record<string, unknown>): unknown;
  info(msg: string, fields?: Record<string, unknown>): unknown;
  debug(msg: string, fields?: Record<string, unknown>): unknown;
  child(fields: Record<string, unknown>): Logger;
}

export type LogLevel = 'error' | 'warn' | 'info' | 'debug';
export type LogFormat = 'json' | 'text';

export interface LoggerOptions {
  /** A level name or a klog verbosity (0–3 = info, 4 and above = debug). Default info. */
  readonly level?: string | number;
  readonly format?: LogFormat;
  /** Where lines go; stdout when absent. Tests pass a stream to read what was logged. */
  readonly stream?: Writable;
  /** Fields on every line (e.g. {component}). */
  readonly fields?: Record<string, unknown>;
  readonly silent?: boolean;
}

const levelNames: readonly LogLevel[] = ['error', 'warn', 'info', 'debug'];

/**
 * Reads `--log-level`: error|warn|info|debug, or a klog-style number where 4 and above turn on
 * debug (klog's V(4) is "debug-level verbosity"; V(0)–V(3) are all routine information).
 */
export function parseLogLevel(value: string | number): LogLevel {
  const text = String(value).trim().toLowerCase();
  const named = levelNames.find((l) => l === text);
  if (named !== undefined) return named;
  if (/^\d+$/.test(text)) return Number(text) >= 4 ? 'debug' : 'info';
  throw new Error(`invalid log level "${String(value)}": use error, warn, info, debug or a verbosity 0-5`);
}

const redacted = '[REDACTED]';
const sensitiveKeys = new Set(['token', 'apitoken', 'authorization', 'x-auth-token', 'password', 'bearertoken']);
const maxDepth = 12;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Masks tokens that travel inside strings ("Bearer abc…" in an error message, a header dump). */
export function redactString(text: string): string {
  return text.replace(/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/g, `$1 ${redacted}`);
}

function redactSecret(secret: Record<string, unknown>, seen: WeakSet<object>, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(secret)) {
    if ((key === 'data' || key === 'stringData') && isRecord(value)) {
      out[key] = Object.fromEntries(Object.keys(value).map((k) => [k, redacted]));
    } else if (key === 'metadata' && isRecord(value) && isRecord(value['annotations'])) {
      // kubectl apply keeps the whole Secret, data included, in this annotation.
      const annotations = { ...value['annotations'] };
      if ('kubectl.kubernetes.io/last-applied-configuration' in annotations) {
        annotations['kubectl.kubernetes.io/last-applied-configuration'] = redacted;
      }
      out[key] = redactValue({ value: { ...value, annotations }, seen, depth: depth + 1 });
    } else {
      out[key] = redactValue({ value, seen, depth: depth + 1 });
    }
  }
  return out;
}

/**
 * Returns a copy of `value` with credentials masked: fields named like a credential (any case),
 * Secret data, bearer tokens inside strings. Errors become errorFields. Never mutates its input:
 * log fields are often live objects of the caller.
 */
export function redactValue(input: { value: unknown; seen?: WeakSet<object>; depth?: number }): unknown {
  const { value } = input;
  const seen = input.seen ?? new WeakSet<object>();
  const depth = input.depth ?? 0;
  if (typeof value === 'string') return redactString(value);
  if (typeof value === 'bigint') return value.toString();
  if (typeof value !== 'object' || value === null) return value;
  if (depth > maxDepth) return '[too deep]';
  if (seen.has(value)) return '[circular]';
  seen.add(value);
  try {
    if (value instanceof Error) return redactValue({ value: errorFields(value), seen, depth: depth + 1 });
    if (value instanceof Date) return value.toISOString();
    if (Array.isArray(value)) return value.map((v: unknown) => redactValue({ value: v, seen, depth: depth + 1 }));
    if (value instanceof Map) return redactValue({ value: Object.fromEntries(value), seen, depth: depth + 1 });
    if (value instanceof Set) return redactValue({ value: [...value], seen, depth: depth + 1 });
    const record = value as Record<string, unknown>;
    if (record['kind'] === 'Secret') return redactSecret(record, seen, depth);
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(record)) {
      out[key] = sensitiveKeys.has(key.toLowerCase()) ? redacted : redactValue({ value: v, seen, depth: depth + 1 });
    }
    return out;
  } finally {
    seen.delete(value);
  }
}

/**
 * Renders an error for the `err` field of a log line: name, code, message, the Kubernetes status
 * and reason when there are some, and the cause chain (bounded, in case of a cycle).
 */
export function errorFields(err: unknown, depth = 0): Record<string, unknown> {
  if (!(err instanceof Error)) return { message: redactString(String(err)) };
  const fields: Record<string, unknown> = { name: err.name, message: redactString(err.message) };
  const extra = err as Error & Record<string, unknown>;
  for (const key of ['code', 'status', 'reason', 'action'] as const) {
    const v = extra[key];
    if (typeof v === 'string' || typeof v === 'number') fields[key] = v;
  }
  if (Array.isArray(extra['causes']) && extra['causes'].length > 0) fields['causes'] = extra['causes'];
  if (err.cause !== undefined && depth < 5) fields['cause'] = errorFields(err.cause, depth + 1);
  return fields;
}

const messageSymbol = Symbol.for('message');
const reservedKeys = new Set(['level', 'message']);

/** Replaces every field of the line by its redacted copy. The info object itself is winston's own. */
const redactFormat = winston.format((info) => {
  for (const key of Object.keys(info)) {
    if (reservedKeys.has(key)) continue;
    info[key] = sensitiveKeys.has(key.toLowerCase()) ? redacted : redactValue({ value: info[key] });
  }
  if (typeof info.message === 'string') info.message = redactString(info.message);
  return info;
});

function fieldsOf(info: winston.Logform.TransformableInfo): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(info)) {
    if (!reservedKeys.has(key) && key !== 'ts') fields[key] = value;
  }
  return fields;
}

/** One JSON object per line: {ts, level, msg, ...fields}. */
const jsonLine = winston.format((info) => {
  const line = { ts: new Date().toISOString(), level: info.level, msg: info.message, ...fieldsOf(info) };
  (info as Record<symbol, unknown>)[messageSymbol] = JSON.stringify(line);
  return info;
});

/** For a terminal: "ts level msg key=value …". */
const textLine = winston.format((info) => {
  const pairs = Object.entries(fieldsOf(info)).map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`);
  (info as Record<symbol, unknown>)[messageSymbol] = [
    new Date().toISOString(),
    info.level.toUpperCase(),
    String(info.message),
    ...pairs,
  ].join(' ');
  return info;
});

/**
 * The root logger of a process (built once, in main) or of a test. JSON lines by default, with
 * credentials redacted from every field.
 */
export function createLogger(options: LoggerOptions = {}): winston.Logger {
  const level = parseLogLevel(options.level ?? 'info');
  const format = winston.format.combine(redactFormat(), (options.format === 'text' ? textLine : jsonLine)());
  const transport =
    options.stream !== undefined ? new winston.transports.Stream({ stream: options.stream }) : new winston.transports.Console();
  return winston.createLogger({
    level,
    format,
    transports: [transport],
    defaultMeta: options.fields,
    silent: options.silent ?? false,
  });
}

/** A logger that drops everything: for tests that do not look at logs. */
export function silentLogger(): winston.Logger {
  return createLogger({ silent: true });
}
