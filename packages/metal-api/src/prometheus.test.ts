import { afterEach, beforeEach, describe, expect, test } from '@jest/globals';
import { Registry } from 'prom-client';
import { createMetalClient } from './client.js';
import { fakeTime, json, startTestServer } from './testing/http-server.js';
import type { TestServer } from './testing/http-server.js';

let server: TestServer;
beforeEach(async () => {
  server = await startTestServer();
});
afterEach(() => server.close());

async function valuesOf(registry: Registry, name: string): Promise<Record<string, number>> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  return Object.fromEntries((metric?.values ?? []).map((v) => [Object.values(v.labels).join('/'), v.value]));
}

describe('prometheus metrics', () => {
  test('count calls, errors, retries and requests by operation', async () => {
    const registry = new Registry();
    const client = createMetalClient({
      token: 'metrics-test-token-0001',
      baseUrl: server.baseUrl,
      time: fakeTime(),
      rateLimit: false,
      registry,
    });
    server.answer(json(503, {}), json(200, { id: 'd1' }), json(422, { errors: ['no'] }));
    await client.devices.get('d1');
    await expect(client.ports.assign('p1', '1000')).rejects.toThrow();

    expect(await valuesOf(registry, 'metal_api_calls_total')).toEqual({ findDeviceById: 1, assignPort: 1 });
    expect(await valuesOf(registry, 'metal_api_errors_total')).toEqual({ 'assignPort/METAL_HTTP': 1 });
    expect(await valuesOf(registry, 'metal_api_retries_total')).toEqual({ 'findDeviceById/server-error': 1 });
    expect(await valuesOf(registry, 'metal_api_requests_total')).toEqual({
      'findDeviceById/503': 1,
      'findDeviceById/200': 1,
      'assignPort/422': 1,
    });
  });

  test('a second client reuses the metrics registered in the same registry', async () => {
    const registry = new Registry();
    const options = { token: 'metrics-test-token-0001', baseUrl: server.baseUrl, time: fakeTime(), rateLimit: false as const, registry };
    const first = createMetalClient(options);
    const second = createMetalClient(options);
    server.answer(json(200, { id: 'a' }), json(200, { id: 'b' }));
    await first.devices.get('a');
    await second.devices.get('b');
    expect(await valuesOf(registry, 'metal_api_calls_total')).toEqual({ findDeviceById: 2 });
  });
});
