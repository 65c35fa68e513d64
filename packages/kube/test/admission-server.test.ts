import { readFile } from 'node:fs/promises';
import { Agent, request } from 'node:https';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { makeServingCertificate } from '@metal-l2/test-support/certificates';
import { waitFor } from '@metal-l2/test-support/wait-for';
import { AdmissionServer, silentLogger } from '../src/index.js';

// The webhook server as the API server's client uses it: a keep-alive connection that sat idle is
// used again. The API server keeps idle webhook connections 90 s; a server that closes them sooner
// races that reuse, and the lost race is an admission failure ("write: broken pipe") that refuses
// the user's object. CI saw it on a Cluster create (test/e2e/cluster-endpoint.test.ts).
const IDLE_MS = 6_000; // longer than Node's default keep-alive wait (5 s), which the server used

const stop = new AbortController();
let server: AdmissionServer;
let ca: Buffer;
let running: Promise<void>;

beforeAll(async () => {
  const { certDir } = await makeServingCertificate();
  ca = await readFile(join(certDir, 'ca.crt'));
  server = new AdmissionServer({
    port: 0,
    host: '127.0.0.1',
    certDir,
    handlers: { '/validate': () => Promise.resolve({ allowed: true }) },
    logger: silentLogger(),
  });
  running = server.start(stop.signal);
  // start() resolves only when stopped; the port is there once it listens.
  await waitFor('the admission server listening', () => server.port() !== 0, { timeoutMs: 10_000 });
});

afterAll(async () => {
  stop.abort();
  await running;
});

function review(agent: Agent): Promise<{ status: number; socket: Socket; reused: boolean }> {
  const body = JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: { uid: 'u-1', operation: 'CREATE', object: {} },
  });
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: server.port(),
        path: '/validate',
        method: 'POST',
        agent,
        ca,
        headers: { 'content-type': 'application/json' },
      },
      (res) => {
        // The socket goes back to the agent's pool at the end of the response: take it now.
        const socket = res.socket;
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, socket, reused: req.reusedSocket }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('the admission server', () => {
  test('keeps an idle keep-alive connection open, so the next review reuses it instead of racing its close', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const first = await review(agent);
      expect(first.status).toBe(200);
      const closedEarly = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), IDLE_MS);
        first.socket.once('close', () => {
          clearTimeout(timer);
          resolve(true);
        });
      });
      expect(closedEarly).toBe(false);
      const second = await review(agent);
      expect(second.status).toBe(200);
      expect(second.reused).toBe(true);
      expect(second.socket).toBe(first.socket);
    } finally {
      agent.destroy();
    }
  });
});
