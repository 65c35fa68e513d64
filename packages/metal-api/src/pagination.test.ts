import { afterEach, beforeEach, describe, expect, test } from '@jest/globals';
import { createMetalClient } from './client.js';
import type { MetalClient } from './client.js';
import { collect, hasNextPage, paginate } from './pagination.js';
import type { Page } from './pagination.js';
import { fakeTime, json, startTestServer } from './testing/http-server.js';
import type { TestServer } from './testing/http-server.js';
import type { Meta } from './types.js';

describe('hasNextPage', () => {
  const link = { href: '/metal/v1/x?page=2' };
  test.each<{ name: string; meta: Meta | undefined; page: number; itemCount: number; want: boolean }>([
    { name: 'no meta: a single page', meta: undefined, page: 1, itemCount: 3, want: false },
    { name: 'before the last page', meta: { current_page: 1, last_page: 3 }, page: 1, itemCount: 10, want: true },
    { name: 'on the last page', meta: { current_page: 3, last_page: 3 }, page: 3, itemCount: 2, want: false },
    { name: 'last_page wins over a stray next', meta: { current_page: 3, last_page: 3, next: link }, page: 3, itemCount: 2, want: false },
    { name: 'only a next link', meta: { next: link }, page: 1, itemCount: 10, want: true },
    { name: 'no next link and no last page', meta: { total: 10 }, page: 1, itemCount: 10, want: false },
    { name: 'an empty page ends the listing', meta: { next: link, last_page: 9 }, page: 2, itemCount: 0, want: false },
    { name: 'our page count when current_page is missing', meta: { last_page: 2 }, page: 1, itemCount: 5, want: true },
  ])('$name', ({ meta, page, itemCount, want }) => {
    expect(hasNextPage({ meta, page, itemCount })).toBe(want);
  });
});

describe('paginate', () => {
  test('fetches a page only when the previous one is used up', async () => {
    const fetched: number[] = [];
    const pages: Page<string>[] = [
      { items: ['a', 'b'], meta: { current_page: 1, last_page: 2 } },
      { items: ['c'], meta: { current_page: 2, last_page: 2 } },
    ];
    const iterator = paginate((page) => {
      fetched.push(page);
      return Promise.resolve(pages[page - 1] ?? { items: [], meta: undefined });
    })[Symbol.asyncIterator]();
    await iterator.next();
    await iterator.next();
    expect(fetched).toEqual([1]);
    await iterator.next();
    expect(fetched).toEqual([1, 2]);
    await expect(iterator.next()).resolves.toEqual({ done: true, value: undefined });
  });
});

describe('paginated operations through the client', () => {
  let server: TestServer;
  let client: MetalClient;
  beforeEach(async () => {
    server = await startTestServer();
    client = createMetalClient({ token: 'pagination-test-token-0001', baseUrl: server.baseUrl, time: fakeTime(), rateLimit: false });
  });
  afterEach(() => server.close());

  const meta = (current: number, last: number): Meta => ({
    current_page: current,
    last_page: last,
    total: 5,
    ...(current < last ? { next: { href: `/metal/v1/projects/p/devices?page=${current + 1}` } } : {}),
  });

  test('devices.list walks every page with the same filters', async () => {
    server.answer(
      json(200, { devices: [{ id: 'd1' }, { id: 'd2' }], meta: meta(1, 3) }),
      json(200, { devices: [{ id: 'd3' }, { id: 'd4' }], meta: meta(2, 3) }),
      json(200, { devices: [{ id: 'd5' }], meta: meta(3, 3) }),
    );
    const devices = await collect(client.devices.list('p', { perPage: 2, tag: 'capp:cluster-id:c1' }));
    expect(devices.map((d) => d.id)).toEqual(['d1', 'd2', 'd3', 'd4', 'd5']);
    expect(server.requests.map((r) => r.url)).toEqual([
      '/metal/v1/projects/p/devices?tag=capp%3Acluster-id%3Ac1&page=1&per_page=2',
      '/metal/v1/projects/p/devices?tag=capp%3Acluster-id%3Ac1&page=2&per_page=2',
      '/metal/v1/projects/p/devices?tag=capp%3Acluster-id%3Ac1&page=3&per_page=2',
    ]);
  });

  test('a caller that stops early fetches no further page', async () => {
    server.answer(json(200, { events: [{ id: 'e1' }, { id: 'e2' }], meta: meta(1, 50) }));
    for await (const event of client.devices.events('d1')) {
      if (event.id === 'e1') break;
    }
    expect(server.requests).toHaveLength(1);
  });

  test("IP reservations repeat the types filter, as the spec's form style asks", async () => {
    server.answer(json(200, { ip_addresses: [{ id: 'r1', type: 'vrf' }], meta: meta(1, 1) }));
    await collect(client.ipReservations.list('p', { types: ['vrf', 'public_ipv4'] }));
    expect(server.requests[0]?.url).toBe('/metal/v1/projects/p/ips?types=vrf&types=public_ipv4&page=1');
  });

  test('a list item without an id is an invalid response', async () => {
    server.answer(json(200, { metal_gateways: [{ id: 'g1' }, { state: 'ready' }], meta: meta(1, 1) }));
    const listing = collect(client.metalGateways.list('p'));
    await expect(listing).rejects.toMatchObject({ code: 'METAL_INVALID_RESPONSE' });
    await expect(listing).rejects.toThrow(
      'findMetalGatewaysByProject (GET /projects/p/metal-gateways) returned an unexpected body: Metal Gateway list metal_gateways[1] has no "id"',
    );
  });
});
