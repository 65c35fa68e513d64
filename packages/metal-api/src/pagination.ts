// Paginated Metal lists (`page`/`per_page` in, `meta` out) as async iterators: callers write
// `for await (const d of client.devices.list(projectId))` and pages are fetched as they go.

import type { Meta } from './types.js';

/** One fetched page: its items and the `meta` block that came with them. */
export interface Page<T> {
  items: readonly T[];
  meta: Meta | undefined;
}

export interface PageOptions {
  /** Items per page; the API's default differs by resource (10 or 250) and most allow up to 1000. */
  perPage?: number;
  signal?: AbortSignal;
}

/** The spec's upper bound for `page`; also stops a server that keeps announcing a next page. */
export const MAX_PAGE = 100_000;

/** Yields every item of every page, fetching page n+1 only when page n is used up. */
export async function* paginate<T>(fetchPage: (page: number) => Promise<Page<T>>): AsyncGenerator<T, void, undefined> {
  for (let page = 1; page <= MAX_PAGE; page += 1) {
    const { items, meta } = await fetchPage(page);
    yield* items;
    if (!hasNextPage({ meta, page, itemCount: items.length })) return;
  }
}

/**
 * Whether another page follows. `last_page` is trusted when present, `meta.next` otherwise; an
 * empty page always ends the listing, so a server that links to itself cannot loop us forever.
 */
export function hasNextPage(at: { meta: Meta | undefined; page: number; itemCount: number }): boolean {
  if (at.meta === undefined || at.itemCount === 0) return false;
  const current = at.meta.current_page ?? at.page;
  if (at.meta.last_page !== undefined) return current < at.meta.last_page;
  return at.meta.next?.href !== undefined;
}

/** Reads an async iterable to the end (for short lists where an array is handier). */
export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}
