// What the API server saw during a burst: requests by verb and resource (from its
// apiserver_request_total counter) and watchers it closed because they did not keep up (from its
// log). Used to tell how many API calls each claim cost a controller, and why it stalled.
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';

const GROUPS = new Set(['ipam.cluster.x-k8s.io', 'ipam.metal.x-k8s.io', 'cluster.x-k8s.io']);

function labelsOf(line) {
  return Object.fromEntries(
    [...line.slice(line.indexOf('{'), line.lastIndexOf('}')).matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]),
  );
}

const resourceOf = (labels) => `${labels.resource}${labels.subresource === '' ? '' : `/${labels.subresource}`}`;

/**
 * A snapshot of the API server's request counters for the IPAM and Cluster API groups (or the
 * `groups` given; 'all' for every group): counts keyed "VERB resource[/subresource] code", and
 * server-side seconds spent keyed "VERB resource".
 * @param {Set<string> | 'all'} [groups]
 */
export async function requestCounts(api, groups = GROUPS) {
  const response = await api.send('GET', '/metrics');
  const counts = new Map();
  const seconds = new Map();
  const calls = new Map();
  const watchEvents = new Map();
  const watchBytes = new Map();
  if (response.status !== 200) return { counts, seconds, calls, watchEvents, watchBytes };
  const add = (map, key, value) => map.set(key, (map.get(key) ?? 0) + value);
  for (const line of response.text.split('\n')) {
    const total = line.startsWith('apiserver_request_total{');
    const sum = line.startsWith('apiserver_request_duration_seconds_sum{');
    const count = line.startsWith('apiserver_request_duration_seconds_count{');
    const events = line.startsWith('apiserver_watch_events_total{');
    const bytes = line.startsWith('apiserver_watch_events_sizes_sum{');
    if (!total && !sum && !count && !events && !bytes) continue;
    const labels = labelsOf(line);
    if (groups !== 'all' && !groups.has(labels.group)) continue;
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    // Watch events are labelled by kind (older servers) or resource (newer ones).
    if (events || bytes) {
      add(events ? watchEvents : watchBytes, labels.resource ?? labels.kind, value);
      continue;
    }
    const key = `${labels.verb} ${resourceOf(labels)}`;
    if (total) add(counts, `${key} ${labels.code}`, value);
    else if (sum) add(seconds, key, value);
    else add(calls, key, value);
  }
  return { counts, seconds, calls, watchEvents, watchBytes };
}

/** Watch events (and their bytes) the API server sent between two snapshots, by kind or resource. */
export function watchDelta(before, after) {
  const rows = new Map();
  for (const [kind, events] of after.watchEvents) {
    const count = events - (before.watchEvents.get(kind) ?? 0);
    const bytes = (after.watchBytes.get(kind) ?? 0) - (before.watchBytes.get(kind) ?? 0);
    if (count > 0) rows.set(kind, { count, bytes });
  }
  return rows;
}

/**
 * The requests between two snapshots, less those the bench made itself (`own`, keyed like
 * counts), as [{ key, count, meanMs }] sorted by count; watches are left out.
 */
export function requestDelta(before, after, own = new Map()) {
  const rows = [];
  for (const [key, value] of after.counts) {
    const count = value - (before.counts.get(key) ?? 0) - (own.get(key) ?? 0);
    if (count <= 0 || key.startsWith('WATCH ')) continue;
    const op = key.slice(0, key.lastIndexOf(' '));
    const calls = (after.calls.get(op) ?? 0) - (before.calls.get(op) ?? 0);
    const seconds = (after.seconds.get(op) ?? 0) - (before.seconds.get(op) ?? 0);
    rows.push({ key, count, meanMs: calls > 0 ? (seconds * 1000) / calls : NaN });
  }
  return rows.sort((a, b) => b.count - a.count);
}

/** How many watchers of `resource` the API server closed for not keeping up, from its log. */
export async function forcedWatchCloses(logFile, resource) {
  try {
    const log = await readFile(logFile, 'utf8');
    return log.split('\n').filter((l) => l.includes(`Forcing ${resource} watcher close due to unresponsiveness`)).length;
  } catch {
    return NaN;
  }
}

/** CPU seconds (user + system) a process has used so far, from /proc/<pid>/stat (100 ticks a second). */
export function cpuSeconds(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields after the command: state is index 0, so utime (14th field) is 11 and stime 12.
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}
