// Page-based pagination as the API does it: `page` (from 1) and `per_page`, answered with a `meta`
// object of hrefs (first, last, previous, next, self), `total`, `current_page` and `last_page`.

import { unprocessable } from './errors.js';
import { API_PREFIX, type SimRequest } from './http.js';

export interface Meta {
  first: { href: string };
  last: { href: string };
  self: { href: string };
  previous?: { href: string };
  next?: { href: string };
  total: number;
  current_page: number;
  last_page: number;
}

export interface PageRequest {
  readonly page: number;
  readonly perPage: number;
}

/** The spec's bounds for `page` (every paginated operation: 1-100000). */
const MAX_PAGE = 100_000;

function boundedInt(query: URLSearchParams, key: string, range: { readonly fallback: number; readonly max: number }): number {
  const { fallback, max } = range;
  const raw = query.get(key);
  if (raw === null) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > max) {
    throw unprocessable(`${key} must be an integer from 1 to ${max}, not ${JSON.stringify(raw)}`);
  }
  return Number(raw);
}

/**
 * Reads page/per_page. The spec gives both a minimum and a maximum (per_page 1-1000, page
 * 1-100000); a value outside is invalid input and refused with a 422 naming the bound, rather
 * than clamped (the spec lists no error status for list operations; 422 is the API's answer to
 * invalid input elsewhere, so the status is a guess).
 */
export function readPage(req: SimRequest, defaults: { readonly perPage: number; readonly maxPerPage: number }): PageRequest {
  const page = boundedInt(req.query, 'page', { fallback: 1, max: MAX_PAGE });
  const perPage = boundedInt(req.query, 'per_page', { fallback: defaults.perPage, max: defaults.maxPerPage });
  return { page, perPage };
}

/** One page of `items` and its meta; hrefs keep the request's other query parameters. */
export function paginate<T>(items: readonly T[], req: SimRequest, p: PageRequest): { readonly items: T[]; readonly meta: Meta } {
  const total = items.length;
  const lastPage = Math.max(1, Math.ceil(total / p.perPage));
  const start = (p.page - 1) * p.perPage;
  const href = (page: number): { href: string } => {
    const q = new URLSearchParams(req.query);
    q.set('page', String(page));
    q.set('per_page', String(p.perPage));
    return { href: `${API_PREFIX}${req.path}?${q.toString()}` };
  };
  const meta: Meta = {
    first: href(1),
    last: href(lastPage),
    self: href(p.page),
    total,
    current_page: p.page,
    last_page: lastPage,
  };
  if (p.page > 1) meta.previous = href(Math.min(p.page - 1, lastPage));
  if (p.page < lastPage) meta.next = href(p.page + 1);
  return { items: items.slice(start, start + p.perPage), meta };
}

/** Meta for lists the API returns whole (e.g. VRFs: the spec gives VrfList a meta but no page parameters). */
export function singlePageMeta(req: SimRequest, total: number): Meta {
  const self = { href: `${API_PREFIX}${req.path}` };
  return { first: self, last: self, self, total, current_page: 1, last_page: 1 };
}
