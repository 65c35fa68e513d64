// The part of contract checking that runs in a worker thread. openapi-backend (CommonJS) requires
// an ES module (json-schema-ref-parser); Node 20.19+ allows that, Jest's module registry does not,
// and Jest wraps every way of reaching Node's own require. A worker thread loads modules with
// Node's real loader, so the validator runs there, and the simulator calls it synchronously: post a
// message, block on a shared flag until the worker has answered, read the answer off the port.
//
// The worker is plain CommonJS evaluated from this string (a worker cannot run TypeScript), kept
// small: load the spec, then answer `match`, `request` and `response` messages.

export const WORKER_SOURCE = String.raw`
'use strict';
const { workerData } = require('node:worker_threads');
const { createRequire } = require('node:module');
const { readFileSync } = require('node:fs');
const load = createRequire(workerData.resolveFrom);
const { port, flag, specPath } = workerData;

// Each call carries a sequence number; the answer carries it back and the flag is set to it after
// the answer is posted, so the caller never wakes for an older call's signal.
let seq = 0;
function reply(message) {
  port.postMessage({ ...message, seq });
  Atomics.store(flag, 0, seq);
  Atomics.notify(flag, 0);
}

function declares(operation, status) {
  const codes = Object.keys(operation.responses || {});
  return codes.includes(String(status)) || codes.includes(String(status)[0] + 'XX') || codes.includes('default');
}

async function main() {
  const { OpenAPIBackend } = load('openapi-backend');
  const addFormats = load('ajv-formats');
  const { parse } = load('yaml');
  const api = new OpenAPIBackend({
    definition: parse(readFileSync(specPath, 'utf8')),
    quick: true,
    apiRoot: '/metal/v1',
    ajvOpts: { allErrors: true },
    customizeAjv: (ajv) => {
      (addFormats.default || addFormats)(ajv);
      // The spec writes format: string on a few fields; it means nothing, so accept anything.
      ajv.addFormat('string', true);
      return ajv;
    },
  });
  await api.init();
  port.on('message', (m) => {
    seq = m.seq;
    try {
      if (m.kind === 'match') {
        const op = api.matchOperation({ method: m.method, path: m.path, headers: {} });
        reply({ operationId: op ? op.operationId : undefined });
      } else if (m.kind === 'request') {
        const op = api.matchOperation({ method: m.method, path: m.path, headers: {} });
        if (!op) return reply({ operationId: undefined, errors: [] });
        const req = { method: m.method, path: m.path, headers: m.headers, query: m.query };
        if (m.hasBody) req.body = m.body;
        const result = api.validateRequest(req, op);
        reply({ operationId: op.operationId, errors: result.errors || [] });
      } else if (m.kind === 'response') {
        const op = api.getOperation(m.operationId);
        if (!op) return reply({ known: false, declared: false, errors: [] });
        if (!declares(op, m.status)) return reply({ known: true, declared: false, errors: [] });
        // A response without a body (204) is null to the validator, as its schema-less entry expects.
        const result = api.validateResponse(m.body === undefined ? null : m.body, op, m.status);
        reply({ known: true, declared: true, errors: result.errors || [] });
      } else {
        reply({ failure: 'unknown message kind ' + m.kind });
      }
    } catch (err) {
      reply({ failure: String(err && err.stack ? err.stack : err) });
    }
  });
  port.postMessage({ ready: true });
}

main().catch((err) => port.postMessage({ failure: String(err && err.stack ? err.stack : err) }));
`;
