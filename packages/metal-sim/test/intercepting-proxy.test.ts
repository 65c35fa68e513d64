// The intercepting proxy: a client that believes it talks to https://api.equinix.com (CAPP does)
// reaches the simulator through HTTPS_PROXY once it trusts the test CA; nothing else gets through.

import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { makeInterceptCertificate } from '@metal-l2/test-support/certificates';
import { startSimulator, type Simulator } from '../src/server.js';
import { useContract } from './support/harness.js';

const contract = useContract();
const HOST = 'api.equinix.com';

interface Answer {
  readonly status: number;
  readonly body: string;
}

/** Opens `CONNECT target` on the proxy; resolves with the tunnel's socket or the refusal. */
function openTunnel(proxyUrl: string, target: string): Promise<{ socket: Socket } | Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(proxyUrl, { method: 'CONNECT', path: target });
    req.on('connect', (res, socket, head) => {
      if (res.statusCode === 200) {
        resolve({ socket });
        return;
      }
      // The refusal's body arrives with the head, or after it.
      let body = head.toString();
      socket.on('data', (c: Buffer) => (body += c.toString()));
      socket.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      socket.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** What Go's client does with HTTPS_PROXY: CONNECT, TLS for the real host name, then HTTP/1.1. */
async function getThroughProxy(proxyUrl: string, path: string, options: { ca: string; userAgent: string; token: string }): Promise<Answer> {
  const tunnel = await openTunnel(proxyUrl, `${HOST}:443`);
  if (!('socket' in tunnel)) throw new Error(`the proxy refused the tunnel: ${tunnel.status} ${tunnel.body}`);
  const tls = tlsConnect({ socket: tunnel.socket, servername: HOST, ca: options.ca, ALPNProtocols: ['h2', 'http/1.1'] });
  await new Promise<void>((resolve, reject) => {
    tls.once('secureConnect', resolve);
    tls.once('error', reject);
  });
  expect(tls.alpnProtocol).toBe('http/1.1');
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      { host: HOST, path, headers: { 'x-auth-token': options.token, 'user-agent': options.userAgent }, createConnection: () => tls },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('intercepting proxy (startSimulator({proxy}))', () => {
  let sim: Simulator;
  let certs: Awaited<ReturnType<typeof makeInterceptCertificate>>;

  beforeAll(async () => {
    certs = await makeInterceptCertificate([HOST]);
    const validator = contract();
    sim = await startSimulator({
      seed: 'proxy',
      proxy: { cert: certs.cert, key: certs.key },
      ...(validator === undefined ? {} : { contract: validator }),
    });
  });
  afterAll(async () => {
    await sim.close();
  });

  test('a client that trusts the test CA reaches the simulator as https://api.equinix.com/metal/v1', async () => {
    const proxyUrl = sim.proxyUrl ?? '';
    expect(proxyUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const answer = await getThroughProxy(proxyUrl, '/metal/v1/projects', {
      ca: certs.ca,
      userAgent: 'cluster-api-provider-packet/test',
      token: 'sim-token',
    });
    expect(answer.status).toBe(200);
    expect((JSON.parse(answer.body) as { projects: unknown[] }).projects).toHaveLength(1);
    expect(sim.proxy?.tunnels()).toBe(1);
    // The simulator logged it like any other call, with the caller's User-Agent.
    expect(sim.requests.entries({ userAgent: 'cluster-api-provider-packet/' }).map((e) => e.operationId)).toEqual(['findProjects']);
  });

  test('a client that does not trust the test CA fails the TLS handshake', async () => {
    const tunnel = await openTunnel(sim.proxyUrl ?? '', `${HOST}:443`);
    if (!('socket' in tunnel)) throw new Error('the tunnel was refused');
    const tls = tlsConnect({ socket: tunnel.socket, servername: HOST });
    const outcome = await new Promise<string>((resolve) => {
      tls.once('secureConnect', () => resolve('connected'));
      tls.once('error', (err: Error & { code?: string }) => resolve(err.code ?? err.message));
    });
    tls.destroy();
    expect(outcome).toMatch(/SELF_SIGNED|UNABLE_TO_GET_ISSUER|UNABLE_TO_VERIFY/);
  });

  test('tunnels to other hosts or ports, and plain proxied requests, are refused with 403', async () => {
    const before = sim.requests.count({});
    const other = await openTunnel(sim.proxyUrl ?? '', 'example.com:443');
    expect(other).toMatchObject({ status: 403 });
    expect((other as Answer).body).toContain('api.equinix.com');
    expect(await openTunnel(sim.proxyUrl ?? '', `${HOST}:80`)).toMatchObject({ status: 403 });
    const plain = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(sim.proxyUrl ?? '', { path: `http://${HOST}/metal/v1/projects`, headers: { host: HOST } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
    expect(plain).toBe(403);
    expect(sim.proxy?.refused()).toEqual([
      { target: 'example.com:443', method: 'CONNECT' },
      { target: `${HOST}:80`, method: 'CONNECT' },
      { target: `http://${HOST}/metal/v1/projects`, method: 'GET' },
    ]);
    expect(sim.requests.count({})).toBe(before);
  });
});
