// Where response bodies enter the program. The checks cover what the client and its callers rely
// on to tell objects apart (a JSON object, an `id` string, the list field being an array, `meta`
// being an object); the other fields are typed as the spec declares them and are not re-checked
// field by field here. The contract suite validates whole responses against the spec instead.

import type { Meta } from './types.js';

/** A body that does not have the promised shape; the transport turns it into MetalInvalidResponseError. */
export class DecodeProblem extends Error {
  override readonly name = 'DecodeProblem';
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A decoder for one object that must carry a string `id` (Device, Port, Vrf, ...). */
export function objectWithId<T>(what: string): (body: unknown) => T {
  return (body) => {
    checkObjectWithId(body, what);
    return body as T;
  };
}

/** A decoder for a body the caller does not read (204, or a 2xx whose content we ignore). */
export function ignoreBody(): void {
  return undefined;
}

/** Items and pagination of a list response such as `{"devices": [...], "meta": {...}}`. */
export interface ListBody<T> {
  items: T[];
  meta: Meta | undefined;
}

/** A decoder for a list response whose array sits under `field` and whose items carry an `id`. */
export function listOf<T>(field: string, what: string): (body: unknown) => ListBody<T> {
  return (body) => {
    if (!isRecord(body)) throw new DecodeProblem(`expected a JSON object holding "${field}"`);
    const raw = body[field] ?? [];
    if (!Array.isArray(raw)) throw new DecodeProblem(`"${field}" is not an array`);
    const items: unknown[] = raw;
    items.forEach((item, index) => checkObjectWithId(item, `${what} ${field}[${index}]`));
    const meta = body['meta'];
    if (meta !== undefined && meta !== null && !isRecord(meta)) throw new DecodeProblem('"meta" is not an object');
    return { items: items as T[], meta: isRecord(meta) ? meta : undefined };
  };
}

/** A decoder for an unpaginated list: just the array under `field`, items carrying an `id`. */
export function itemsOf<T>(field: string, what: string): (body: unknown) => T[] {
  const decode = listOf<T>(field, what);
  return (body) => decode(body).items;
}

function checkObjectWithId(value: unknown, what: string): void {
  if (!isRecord(value)) throw new DecodeProblem(`expected ${what} as a JSON object`);
  if (typeof value['id'] !== 'string' || value['id'] === '') throw new DecodeProblem(`${what} has no "id"`);
}
