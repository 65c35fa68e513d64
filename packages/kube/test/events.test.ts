import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createTestNamespace, deleteTestNamespace, loadKubeConfig } from '@metal-l2/test-support/cluster';
import { builtinTypes, createLogger, EventRecorder, KubeClient, silentLogger, type KubeObject } from '../src/index.js';
import { newConfigMap, type ConfigMap } from './fixtures.js';

interface CoreEvent extends KubeObject {
  involvedObject: { kind?: string; name?: string; namespace?: string; uid?: string };
  reason: string;
  message: string;
  type: string;
  count: number;
  firstTimestamp: string;
  lastTimestamp: string;
  source: { component?: string; host?: string };
}

describe('EventRecorder against the API server', () => {
  const kc = loadKubeConfig();
  const client = KubeClient.fromKubeConfig(kc);
  let ns = '';
  let subject: ConfigMap;

  beforeAll(async () => {
    ns = await createTestNamespace(kc, 'kube-events');
    subject = await client.create<ConfigMap>(builtinTypes.configMap, newConfigMap(ns, 'subject'));
  });
  afterAll(async () => {
    await deleteTestNamespace(kc, ns);
    client.close();
  });

  async function eventsAbout(name: string): Promise<CoreEvent[]> {
    const { items } = await client.list<CoreEvent>(builtinTypes.event, { namespace: ns, fieldSelector: `involvedObject.name=${name}` });
    return items.sort((a, b) => a.reason.localeCompare(b.reason));
  }

  test('repeats of one event update its count; a different message is another event', async () => {
    const recorder = new EventRecorder({ client, component: 'metal-l2-test', instance: 'pod-1', logger: silentLogger() });
    for (let i = 0; i < 3; i++)
      recorder.event(subject, { type: 'Warning', reason: 'PoolExhausted', message: 'no free address in pool ns/p' });
    recorder.event(subject, { type: 'Normal', reason: 'AddressAllocated', message: 'allocated 10.0.0.5' });
    await recorder.flush();

    const events = await eventsAbout('subject');
    expect(events).toHaveLength(2);
    expect(events[0]).toMatchObject({
      reason: 'AddressAllocated',
      type: 'Normal',
      count: 1,
      involvedObject: { kind: 'ConfigMap', name: 'subject', namespace: ns, uid: subject.metadata.uid },
      source: { component: 'metal-l2-test', host: 'pod-1' },
    });
    expect(events[1]).toMatchObject({ reason: 'PoolExhausted', type: 'Warning', count: 3, message: 'no free address in pool ns/p' });
    expect(Date.parse(events[1]?.lastTimestamp ?? '')).toBeGreaterThanOrEqual(Date.parse(events[1]?.firstTimestamp ?? ''));
  });

  test('an event that expired meanwhile is created again', async () => {
    const recorder = new EventRecorder({ client, component: 'metal-l2-test', logger: silentLogger() });
    const other = await client.create<ConfigMap>(builtinTypes.configMap, newConfigMap(ns, 'expiring'));
    recorder.event(other, { type: 'Normal', reason: 'Synced', message: 'ok' });
    await recorder.flush();
    const [first] = await eventsAbout('expiring');
    await client.delete(builtinTypes.event, { namespace: ns, name: first?.metadata.name ?? '' });
    recorder.event(other, { type: 'Normal', reason: 'Synced', message: 'ok' });
    await recorder.flush();
    const events = await eventsAbout('expiring');
    expect(events).toHaveLength(1);
    expect(events[0]?.count).toBe(1);
    expect(events[0]?.metadata.name).not.toBe(first?.metadata.name);
  });

  test('a failed write is logged, never thrown at the caller', async () => {
    const stream = new PassThrough();
    const lines: string[] = [];
    stream.on('data', (c: Buffer) => lines.push(c.toString('utf8')));
    const recorder = new EventRecorder({ client, component: 'metal-l2-test', logger: createLogger({ stream }) });
    const orphan: ConfigMap = {
      kind: 'ConfigMap',
      apiVersion: 'v1',
      metadata: { namespace: 'no-such-namespace-kube-events', name: 'ghost' },
    };
    expect(() => recorder.event(orphan, { type: 'Warning', reason: 'Lost', message: 'nobody hears this' })).not.toThrow();
    await recorder.flush();
    const logged = lines
      .join('')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(logged).toEqual([expect.objectContaining({ level: 'warn', msg: 'could not record event', reason: 'Lost' })]);
  });
});
