// Reading request bodies and query strings. Bodies arrive as `unknown`; every field is checked
// here, and a wrong type is a 422 naming the field, as the API answers malformed input.

import { unprocessable } from './errors.js';
import type { SimRequest } from './http.js';

export type Fields = Readonly<Record<string, unknown>>;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The JSON body as an object; a missing body reads as `{}`. */
export function bodyFields(req: SimRequest): Fields {
  if (req.body === undefined) return {};
  if (!isRecord(req.body)) throw unprocessable('the request body must be a JSON object');
  return req.body;
}

export function optString(f: Fields, key: string): string | undefined {
  const v = f[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw unprocessable(`${key} must be a string`);
  return v;
}

export function reqString(f: Fields, key: string): string {
  const v = optString(f, key);
  if (v === undefined || v === '') throw unprocessable(`${key} is required`);
  return v;
}

export function optInteger(f: Fields, key: string): number | undefined {
  const v = f[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v)) throw unprocessable(`${key} must be an integer`);
  return v;
}

export function reqInteger(f: Fields, key: string): number {
  const v = optInteger(f, key);
  if (v === undefined) throw unprocessable(`${key} is required`);
  return v;
}

export function optBoolean(f: Fields, key: string): boolean | undefined {
  const v = f[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw unprocessable(`${key} must be a boolean`);
  return v;
}

export function optStringArray(f: Fields, key: string): string[] | undefined {
  const v = f[key];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) throw unprocessable(`${key} must be a list of strings`);
  return v;
}

export function optRecord(f: Fields, key: string): Record<string, unknown> | undefined {
  const v = f[key];
  if (v === undefined || v === null) return undefined;
  if (!isRecord(v)) throw unprocessable(`${key} must be an object`);
  return v;
}

export function optList(f: Fields, key: string): Fields[] | undefined {
  const v = f[key];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || !v.every(isRecord)) throw unprocessable(`${key} must be a list of objects`);
  return v;
}

/** `?flag=true|false`; anything else is a 422. */
export function queryBoolean(query: URLSearchParams, key: string): boolean | undefined {
  const v = query.get(key);
  if (v === null) return undefined;
  if (v === 'true') return true;
  if (v === 'false') return false;
  throw unprocessable(`${key} must be true or false`);
}

/** `include`/`exclude`: comma-separated (the spec's `explode: false`) and/or repeated. */
export function queryList(query: URLSearchParams, key: string): Set<string> {
  const out = new Set<string>();
  for (const v of query.getAll(key)) for (const part of v.split(',')) if (part.trim() !== '') out.add(part.trim());
  return out;
}
