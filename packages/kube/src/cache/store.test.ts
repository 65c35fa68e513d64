import { describe, expect, test } from '@jest/globals';
import type { KubeObject } from '../resource.js';
import { Indexer } from './indexer.js';
import { applyWatchEvent, replaceAll } from './store.js';

interface Claim extends KubeObject {
  spec: { pool: string };
}

function claim(name: string, rv: string, pool = 'p1'): Claim {
  return { metadata: { namespace: 'ns', name, resourceVersion: rv }, spec: { pool } };
}

describe('applyWatchEvent', () => {
  test('ADDED of an unknown object is an add', () => {
    const store = new Map<string, Claim>();
    expect(applyWatchEvent(store, { type: 'ADDED', object: claim('a', '1') })).toEqual({ type: 'add', object: claim('a', '1') });
    expect(store.get('ns/a')).toEqual(claim('a', '1'));
  });

  test('MODIFIED of a known object is an update carrying the old state', () => {
    const store = new Map([['ns/a', claim('a', '1')]]);
    expect(applyWatchEvent(store, { type: 'MODIFIED', object: claim('a', '2', 'p2') })).toEqual({
      type: 'update',
      oldObject: claim('a', '1'),
      object: claim('a', '2', 'p2'),
    });
  });

  test('an event repeating the cached resourceVersion changes nothing', () => {
    const store = new Map([['ns/a', claim('a', '1')]]);
    expect(applyWatchEvent(store, { type: 'ADDED', object: claim('a', '1') })).toBeUndefined();
  });

  test('DELETED removes the object and hands out its final state', () => {
    const store = new Map([['ns/a', claim('a', '1')]]);
    expect(applyWatchEvent(store, { type: 'DELETED', object: claim('a', '3') })).toEqual({ type: 'delete', object: claim('a', '3') });
    expect(store.size).toBe(0);
  });

  test('DELETED of an object the cache never had changes nothing', () => {
    expect(applyWatchEvent(new Map<string, Claim>(), { type: 'DELETED', object: claim('a', '3') })).toBeUndefined();
  });

  test('cluster-scoped objects are keyed by name alone', () => {
    const store = new Map<string, KubeObject>();
    applyWatchEvent(store, { type: 'ADDED', object: { metadata: { name: 'global', resourceVersion: '1' } } });
    expect([...store.keys()]).toEqual(['global']);
  });
});

describe('replaceAll (relist)', () => {
  test('diffs a fresh list into adds, updates and deletes', () => {
    const store = new Map([
      ['ns/kept', claim('kept', '1')],
      ['ns/changed', claim('changed', '1')],
      ['ns/gone', claim('gone', '1')],
    ]);
    const changes = replaceAll(store, [claim('kept', '1'), claim('changed', '5'), claim('new', '6')]);
    expect(changes).toEqual([
      { type: 'update', oldObject: claim('changed', '1'), object: claim('changed', '5') },
      { type: 'add', object: claim('new', '6') },
      { type: 'delete', object: claim('gone', '1') },
    ]);
    expect([...store.keys()].sort()).toEqual(['ns/changed', 'ns/kept', 'ns/new']);
    expect(store.get('ns/changed')?.metadata.resourceVersion).toBe('5');
  });

  test('unchanged objects yield nothing (the resync timer, not a list, re-announces them)', () => {
    const store = new Map([['ns/kept', claim('kept', '1')]]);
    expect(replaceAll(store, [claim('kept', '1')])).toEqual([]);
  });

  test('an empty list empties the cache', () => {
    const store = new Map([['ns/a', claim('a', '1')]]);
    expect(replaceAll(store, [])).toEqual([{ type: 'delete', object: claim('a', '1') }]);
    expect(store.size).toBe(0);
  });
});

describe('Indexer', () => {
  test('follows updates and deletes', () => {
    const indexer = new Indexer<Claim>();
    indexer.addIndex('pool', (c) => [c.spec.pool], [['ns/a', claim('a', '1', 'p1')]]);
    indexer.update('ns/b', claim('b', '1', 'p1'));
    expect(indexer.keys('pool', 'p1').sort()).toEqual(['ns/a', 'ns/b']);
    indexer.update('ns/a', claim('a', '2', 'p2'));
    expect(indexer.keys('pool', 'p1')).toEqual(['ns/b']);
    expect(indexer.keys('pool', 'p2')).toEqual(['ns/a']);
    indexer.update('ns/b', undefined);
    expect(indexer.keys('pool', 'p1')).toEqual([]);
  });

  test('an object may sit under several values, each once', () => {
    const indexer = new Indexer<Claim>();
    indexer.addIndex('multi', () => ['x', 'y', 'x'], []);
    indexer.update('ns/a', claim('a', '1'));
    expect(indexer.keys('multi', 'x')).toEqual(['ns/a']);
    expect(indexer.keys('multi', 'y')).toEqual(['ns/a']);
  });

  test('an unknown index name is an error, not an empty answer', () => {
    expect(() => new Indexer<Claim>().keys('typo', 'x')).toThrow('no index named typo');
  });
});
