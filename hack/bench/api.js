// A small Kubernetes API client for the benchmarks: JSON requests and watches over one keep-alive
// HTTPS agent, with the control plane's static token. Written on node:https rather than
// @kubernetes/client-node so the load generator spends as little of the 2 shared cores as it can.
import { Buffer } from 'node:buffer';
import https from 'node:https';

export class ApiError extends Error {
  constructor(method, path, response) {
    const message = response.json?.message ?? response.text.slice(0, 300);
    super(`${method} ${path}: HTTP ${response.status}: ${message}`);
    this.status = response.status;
  }
}

export class Api {
  /** @param {{ server: string, token: string, caData: string }} cluster */
  constructor(cluster) {
    this.server = new URL(cluster.server);
    this.token = cluster.token;
    this.agent = new https.Agent({ keepAlive: true, maxSockets: 128, ca: Buffer.from(cluster.caData, 'base64') });
  }

  /** Sends one request; resolves with status and parsed JSON (when any), never throws on HTTP status. */
  send(method, path, options = {}) {
    const body = options.body === undefined ? undefined : Buffer.from(JSON.stringify(options.body));
    return new Promise((resolve, reject) => {
      const req = https.request(
        {
          host: this.server.hostname,
          port: this.server.port,
          method,
          path,
          agent: this.agent,
          headers: {
            authorization: `Bearer ${this.token}`,
            accept: 'application/json',
            ...(body === undefined ? {} : { 'content-type': options.contentType ?? 'application/json', 'content-length': body.length }),
          },
        },
        (res) => {
          const chunks = [];
          res.on('data', (chunk) => chunks.push(chunk));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let json;
            try {
              json = text === '' ? undefined : JSON.parse(text);
            } catch {
              json = undefined;
            }
            resolve({ status: res.statusCode ?? 0, json, text });
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  /** Like send, but throws ApiError unless the status is 2xx (or listed in `allow`). */
  async request(method, path, options = {}) {
    const response = await this.send(method, path, options);
    const ok = (response.status >= 200 && response.status < 300) || (options.allow ?? []).includes(response.status);
    if (!ok) throw new ApiError(method, path, response);
    return response.json;
  }

  get(path, options) {
    return this.request('GET', path, options);
  }

  post(path, body, options = {}) {
    return this.request('POST', path, { ...options, body });
  }

  mergePatch(path, body) {
    return this.request('PATCH', path, { body, contentType: 'application/merge-patch+json' });
  }

  /**
   * Lists `path`, then watches it from the list's resourceVersion, calling onEvent(type, object,
   * seenAtMs) for each listed item (type 'LISTED') and each watch event. A watch that ends (server
   * timeout, 410 Gone) is resumed from the last seen resourceVersion, or from a fresh list.
   * Returns { stop }.
   */
  watchList(path, onEvent) {
    let stopped = false;
    let current;
    let restarts = 0;
    const sep = path.includes('?') ? '&' : '?';
    const relist = async () => {
      const list = await this.get(path);
      const now = Date.now();
      for (const item of list.items ?? []) onEvent('LISTED', item, now);
      return list.metadata.resourceVersion;
    };
    const once = (resourceVersion) =>
      new Promise((resolve, reject) => {
        let lastVersion = resourceVersion;
        let gone = false;
        const req = https.request(
          {
            host: this.server.hostname,
            port: this.server.port,
            method: 'GET',
            path: `${path}${sep}watch=1&allowWatchBookmarks=true&timeoutSeconds=3600&resourceVersion=${encodeURIComponent(resourceVersion)}`,
            agent: this.agent,
            headers: { authorization: `Bearer ${this.token}`, accept: 'application/json' },
          },
          (res) => {
            if (res.statusCode !== 200) {
              res.resume();
              resolve({ gone: true, lastVersion });
              return;
            }
            let buffered = '';
            res.setEncoding('utf8');
            res.on('data', (chunk) => {
              const seenAt = Date.now();
              buffered += chunk;
              let nl;
              while ((nl = buffered.indexOf('\n')) >= 0) {
                const line = buffered.slice(0, nl);
                buffered = buffered.slice(nl + 1);
                if (line.trim() === '') continue;
                const event = JSON.parse(line);
                if (event.type === 'ERROR') {
                  gone = true;
                  continue;
                }
                lastVersion = event.object?.metadata?.resourceVersion ?? lastVersion;
                if (event.type !== 'BOOKMARK') onEvent(event.type, event.object, seenAt);
              }
            });
            res.on('end', () => resolve({ gone, lastVersion }));
            res.on('error', () => resolve({ gone, lastVersion }));
          },
        );
        current = req;
        req.on('error', (err) => (stopped ? resolve({ gone, lastVersion }) : reject(err)));
        req.end();
      });
    const ready = relist();
    const loop = (async () => {
      let version = await ready;
      while (!stopped) {
        const result = await once(version);
        if (stopped) break;
        restarts++;
        version = result.gone ? await relist() : result.lastVersion;
      }
    })();
    return {
      /** Resolves once the initial list was delivered and the watch is being opened. */
      ready,
      /** How often the watch ended and was resumed (server timeout, forced close, 410 Gone). */
      restarts: () => restarts,
      stop: async () => {
        stopped = true;
        current?.destroy();
        await loop.catch(() => undefined);
      },
    };
  }

  close() {
    this.agent.destroy();
  }
}

/**
 * The REST path of a collection (or one object) of a group/version resource.
 * @param {{ group: string, version: string, plural: string, namespace?: string, name?: string, subresource?: string }} resource
 */
export function resourcePath({ group, version, plural, namespace, name, subresource }) {
  const base = group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
  const ns = namespace === undefined ? '' : `/namespaces/${namespace}`;
  const one = name === undefined ? '' : `/${name}`;
  const sub = subresource === undefined ? '' : `/${subresource}`;
  return `${base}${ns}/${plural}${one}${sub}`;
}
