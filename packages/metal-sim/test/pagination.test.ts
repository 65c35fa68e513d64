// Paginated lists: page/per_page in, `meta` out (first, last, previous, next, self hrefs, total,
// current_page, last_page) as the spec's Meta schema describes.

import { describe, expect, test } from '@jest/globals';
import type { DeviceWire } from '../src/wire.js';
import type { Meta } from '../src/pagination.js';
import { ContractValidator } from '../src/contract.js';
import { describeContract, HAS_SPEC, SPEC_PATH, useSimulator } from './support/harness.js';

const sim = useSimulator();

describe('pagination', () => {
  test('devices come in pages with meta links that keep the other query parameters', async () => {
    const t = sim();
    for (let i = 0; i < 7; i++) {
      const res = await t.api.post(`/projects/${t.projectId}/devices`, {
        metro: 'da',
        plan: 'c3.small.x86',
        operating_system: 'ubuntu_22_04',
        hostname: `node-${i}`,
        tags: ['paged'],
      });
      expect(res.status).toBe(201);
    }
    const base = `/metal/v1/projects/${t.projectId}/devices`;
    const page2 = await t.api.get<{ devices: DeviceWire[]; meta: Meta }>(`/projects/${t.projectId}/devices?tag=paged&page=2&per_page=3`);
    expect(page2.status).toBe(200);
    expect(page2.body.devices.map((d) => d.hostname)).toEqual(['node-3', 'node-4', 'node-5']);
    expect(page2.body.meta).toEqual({
      first: { href: `${base}?tag=paged&page=1&per_page=3` },
      previous: { href: `${base}?tag=paged&page=1&per_page=3` },
      self: { href: `${base}?tag=paged&page=2&per_page=3` },
      next: { href: `${base}?tag=paged&page=3&per_page=3` },
      last: { href: `${base}?tag=paged&page=3&per_page=3` },
      total: 7,
      current_page: 2,
      last_page: 3,
    });
    const last = await t.api.get<{ devices: DeviceWire[]; meta: Meta }>(page2.body.meta.last.href.replace('/metal/v1', ''));
    expect(last.body.devices.map((d) => d.hostname)).toEqual(['node-6']);
    expect(last.body.meta.next).toBeUndefined();
  });

  test('walking next links visits every item once', async () => {
    const t = sim();
    const seen: string[] = [];
    let path: string | undefined = `/projects/${t.projectId}/devices?tag=paged&per_page=2`;
    while (path !== undefined) {
      const res: { body: { devices: DeviceWire[]; meta: Meta } } = await t.api.get(path);
      seen.push(...res.body.devices.map((d) => d.hostname));
      path = res.body.meta.next?.href.replace('/metal/v1', '');
    }
    expect(seen).toEqual(['node-0', 'node-1', 'node-2', 'node-3', 'node-4', 'node-5', 'node-6']);
  });

  test('defaults are page 1 and per_page 10; past the end is an empty page', async () => {
    const t = sim();
    const first = await t.api.get<{ devices: DeviceWire[]; meta: Meta }>(`/projects/${t.projectId}/devices`);
    expect(first.body.meta).toMatchObject({ current_page: 1, last_page: 1, total: 7 });
    expect(first.body.devices).toHaveLength(7);
    const beyond = await t.api.get<{ devices: DeviceWire[]; meta: Meta }>(`/projects/${t.projectId}/devices?page=5`);
    expect(beyond.body.devices).toEqual([]);
    expect(beyond.body.meta).toMatchObject({ current_page: 5, last_page: 1 });
  });

  test('IP reservations default to 250 per page; events and gateways paginate too', async () => {
    const t = sim();
    for (let i = 0; i < 3; i++)
      expect((await t.api.post(`/projects/${t.projectId}/ips`, { type: 'public_ipv4', metro: 'da', quantity: 8 })).status).toBe(201);
    const ips = await t.api.get<{ ip_addresses: unknown[]; meta: Meta }>(`/projects/${t.projectId}/ips?types=public_ipv4&per_page=2`);
    expect(ips.body.ip_addresses).toHaveLength(2);
    expect(ips.body.meta).toMatchObject({ total: 3, last_page: 2 });
    expect((await t.api.get<{ meta: Meta }>(`/projects/${t.projectId}/ips`)).body.meta.self.href).toContain('per_page=250');
    const gws = await t.api.get<{ metal_gateways: unknown[]; meta: Meta }>(`/projects/${t.projectId}/metal-gateways`);
    expect(gws.body.meta).toMatchObject({ total: 0, current_page: 1 });
  });
});

describe('pagination bounds (the spec: page 1-100000, per_page 1-1000)', () => {
  // Out-of-range input breaks the spec's request schema, so this simulator runs without the
  // file's contract validator; the spec's own verdict on the request is checked below.
  const unchecked = useSimulator({}, { contract: false });

  test.each([
    ['per_page=1001', 'per_page must be an integer from 1 to 1000'],
    ['per_page=0', 'per_page must be an integer from 1 to 1000'],
    ['page=100001', 'page must be an integer from 1 to 100000'],
    ['per_page=ten', 'per_page must be an integer from 1 to 1000'],
  ])('%s is refused with a 422 naming the bound, not clamped', async (query, message) => {
    const t = unchecked();
    const res = await t.api.get<{ errors: string[] }>(`/projects/${t.projectId}/devices?${query}`);
    expect(res.status).toBe(422);
    expect(res.body.errors.join(' ')).toContain(message);
  });

  test('per_page=1000 is the largest page', async () => {
    const t = unchecked();
    expect((await t.api.get(`/projects/${t.projectId}/devices?per_page=1000`)).status).toBe(200);
  });

  test('the spec itself refuses per_page=1001', async () => {
    if (!HAS_SPEC) return; // the file's contract block says why the spec is missing
    const own = await ContractValidator.load(SPEC_PATH);
    try {
      own.validateRequest({
        method: 'GET',
        path: `/metal/v1/projects/${sim().projectId}/devices`,
        rawQuery: 'per_page=1001',
        headers: { 'x-auth-token': 'sim-token' },
        body: undefined,
      });
      const found = own.report().violations;
      expect(found.map((v) => v.direction)).toEqual(['request']);
      expect(found[0]?.messages.join(' ')).toContain('1000');
    } finally {
      await own.close();
    }
  });
});

describeContract(sim);
