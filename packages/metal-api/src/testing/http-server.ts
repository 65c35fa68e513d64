// A real HTTP server on port 0 for the client's unit tests: each test queues what the server
// answers, request by request, and reads back what the client sent. No mocked fetch anywhere.
// Not part of the build.

import { createServer } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import type { TimeSource } from '../retry.js';

export interface RecordedRequest {
  method: string;
  /** Path and query, as received (`/metal/v1/devices/x?include=a,b`). */
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export type Answer = (res: ServerResponse, req: RecordedRequest) => void;

export interface TestServer {
  /** Base URL to give the client, ending in /metal/v1 like the real API. */
  baseUrl: string;
  requests: RecordedRequest[];
  /** Answers for the next requests, in order; once used up, every request gets a 599. */
  answer(...answers: Answer[]): void;
  close(): Promise<void>;
}

/** Answers with a JSON body. */
export function json(status: number, body: unknown, headers: Record<string, string> = {}): Answer {
  return (res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
}

/** Answers with a raw body (an intermediary's HTML page, an empty 204). */
export function raw(status: number, body: string, headers: Record<string, string> = {}): Answer {
  return (res) => {
    res.writeHead(status, headers);
    res.end(body);
  };
}

/** Never answers (until the server closes): for timeouts. */
export const hang: Answer = () => undefined;

/** Drops the connection without an answer. */
export const drop: Answer = (res) => {
  res.socket?.destroy();
};

export async function startTestServer(): Promise<TestServer> {
  const requests: RecordedRequest[] = [];
  const queue: Answer[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const recorded: RecordedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(recorded);
      const next = queue.shift() ?? json(599, { error: 'test server: no answer queued' });
      next(res, recorded);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/metal/v1`,
    requests,
    answer: (...answers) => queue.push(...answers),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err === undefined ? resolve() : reject(err)));
      }),
  };
}

/** A base URL where nothing listens: the port was just released. */
export async function refusedBaseUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/metal/v1`;
}

/** Time that moves only when the client sleeps; records every sleep. */
export interface FakeTime extends TimeSource {
  sleeps: number[];
  nowMs: number;
}

export function fakeTime(options: { random?: number; startMs?: number } = {}): FakeTime {
  const time: FakeTime = {
    sleeps: [],
    nowMs: options.startMs ?? Date.UTC(2026, 0, 1),
    now: () => time.nowMs,
    sleep: (ms, signal) => {
      if (signal?.aborted === true) return Promise.reject(new Error('aborted'));
      time.sleeps.push(ms);
      time.nowMs += ms;
      return Promise.resolve();
    },
    random: () => options.random ?? 0.5,
  };
  return time;
}
