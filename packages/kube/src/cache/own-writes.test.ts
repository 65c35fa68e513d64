import { describe, expect, test } from '@jest/globals';
import type { KubeObject } from '../resource.js';
import { OwnWrites } from './own-writes.js';

const obj = (rv: string, uid = 'u1'): KubeObject => ({
  apiVersion: 'network.metal.x-k8s.io/v1alpha1',
  kind: 'MachineNetwork',
  metadata: { name: 'm', namespace: 'n', uid, resourceVersion: rv },
});

/** Remembers each written version in turn, the first based on `base`, as a patch of metadata then status does. */
function wrote(own: OwnWrites<KubeObject>, base: string, written: readonly KubeObject[]): void {
  let basedOn: string | undefined = base;
  for (const w of written) {
    own.remember('', 'n/m', { basedOn, written: w });
    basedOn = w.metadata.resourceVersion;
  }
}

describe('OwnWrites', () => {
  test('a cache still at the version our write was based on is replaced by what we wrote', () => {
    const own = new OwnWrites<KubeObject>();
    wrote(own, '5', [obj('6')]);
    expect(own.fresher('', 'n/m', obj('5'))?.metadata.resourceVersion).toBe('6');
  });

  test('the version between our metadata and status patches is replaced too', () => {
    const own = new OwnWrites<KubeObject>();
    wrote(own, '5', [obj('6'), obj('7')]);
    expect(own.fresher('', 'n/m', obj('6'))?.metadata.resourceVersion).toBe('7');
  });

  test('any other cached version wins and the memory is dropped', () => {
    const own = new OwnWrites<KubeObject>();
    wrote(own, '5', [obj('6')]);
    expect(own.fresher('', 'n/m', obj('7'))?.metadata.resourceVersion).toBe('7');
    expect(own.fresher('', 'n/m', obj('5'))?.metadata.resourceVersion).toBe('5');
  });

  test('a recreated object (another uid) is never replaced', () => {
    const own = new OwnWrites<KubeObject>();
    wrote(own, '5', [obj('6')]);
    expect(own.fresher('', 'n/m', obj('5', 'u2'))?.metadata.uid).toBe('u2');
  });

  test('a create the cache has not shown yet is ours until it has', () => {
    const own = new OwnWrites<KubeObject>();
    own.remember('pool', 'b', { basedOn: undefined, written: obj('3') });
    expect(own.unseen('pool', new Set())).toHaveLength(1);
    expect(own.fresher('pool', 'b', undefined)?.metadata.resourceVersion).toBe('3');
    expect(own.fresher('pool', 'b', obj('3'))?.metadata.resourceVersion).toBe('3');
    expect(own.fresher('pool', 'b', undefined)).toBeUndefined();
  });
});

describe('OwnWrites: writes not kept', () => {
  const claim = (what: string, value: string): { what: string; value: string } => ({ what, value });

  test('skips an identical write while the cache shows the version it was based on', () => {
    const own = new OwnWrites<KubeObject>();
    own.wrote('', 'uid-1', { ...claim('status', 'Ready/True'), basedOn: '41', produced: '42' });
    expect(own.alreadyWrote('', 'uid-1', { ...claim('status', 'Ready/True'), cachedVersion: '41' })).toBe(true);
    expect(own.alreadyWrote('', 'uid-1', { ...claim('status', 'Ready/False'), cachedVersion: '41' })).toBe(false);
    expect(own.alreadyWrote('', 'uid-2', { ...claim('status', 'Ready/True'), cachedVersion: '41' })).toBe(false);
  });

  test('a version another of our writes produced still counts as ours', () => {
    const own = new OwnWrites<KubeObject>();
    // The finalizer patch took the claim from 41 to 42; the status patch was based on the cached 41.
    own.wrote('', 'uid-1', { ...claim('finalizer', 'added'), basedOn: '41', produced: '42' });
    own.wrote('', 'uid-1', { ...claim('status', 'Ready/True'), basedOn: '41', produced: '43' });
    expect(own.alreadyWrote('', 'uid-1', { ...claim('status', 'Ready/True'), cachedVersion: '42' })).toBe(true);
  });

  test('trusts the cache again once it shows a version that is not ours', () => {
    const own = new OwnWrites<KubeObject>();
    own.wrote('', 'uid-1', { ...claim('finalizer', 'added'), basedOn: '41', produced: '42' });
    expect(own.alreadyWrote('', 'uid-1', { ...claim('finalizer', 'added'), cachedVersion: '57' })).toBe(false);
    expect(own.alreadyWrote('', 'uid-1', { ...claim('finalizer', 'added'), cachedVersion: '41' })).toBe(false);
  });

  test('an object the cache does not have yet is matched by its absence', () => {
    const own = new OwnWrites<KubeObject>();
    own.wrote('', 'address:ns/a', { ...claim('created', '10.0.0.1'), basedOn: undefined, produced: '7' });
    expect(own.alreadyWrote('', 'address:ns/a', { ...claim('created', '10.0.0.1'), cachedVersion: undefined })).toBe(true);
  });

  test('expires after its time to live; forgetWrites drops what was written but not the echo', () => {
    let now = 1_000;
    const own = new OwnWrites<KubeObject>({ ttlMs: 30_000, nowMs: () => now });
    own.wrote('', 'uid-1', { ...claim('status', 'x'), basedOn: '1', produced: '2' });
    own.wrote('', 'uid-2', { ...claim('status', 'x'), basedOn: '1', produced: '2' });
    own.forgetWrites('', 'uid-2');
    expect(own.alreadyWrote('', 'uid-2', { ...claim('status', 'x'), cachedVersion: '1' })).toBe(false);
    expect(own.isEcho('', 'uid-2', '2')).toBe(true);
    now += 30_000;
    expect(own.alreadyWrote('', 'uid-1', { ...claim('status', 'x'), cachedVersion: '1' })).toBe(false);
  });

  test('isEcho: the versions our writes produced, not those they were based on, until they expire', () => {
    let now = 1_000;
    const own = new OwnWrites<KubeObject>({ ttlMs: 30_000, nowMs: () => now });
    own.wrote('', 'uid-1', { ...claim('finalizer', 'added'), basedOn: '41', produced: '42' });
    own.wrote('', 'uid-1', { ...claim('status', 'Ready/True'), basedOn: '42', produced: '43' });
    expect(own.isEcho('', 'uid-1', '42')).toBe(true);
    expect(own.isEcho('', 'uid-1', '43')).toBe(true);
    expect(own.isEcho('', 'uid-1', '41')).toBe(false);
    expect(own.isEcho('', 'uid-1', '44')).toBe(false);
    expect(own.isEcho('', 'uid-2', '42')).toBe(false);
    expect(own.isEcho('', 'uid-1', undefined)).toBe(false);
    now += 30_000;
    expect(own.isEcho('', 'uid-1', '43')).toBe(false);
  });

  test('isEcho: any version while a write to the object is in flight, its own included', async () => {
    const own = new OwnWrites<KubeObject>();
    let answer: (version: string) => void = () => undefined;
    const sent = own.writing('', 'uid-1', () => new Promise<string>((resolve) => (answer = resolve)));
    expect(own.isEcho('', 'uid-1', '50')).toBe(true);
    expect(own.isEcho('', 'uid-2', '50')).toBe(false);
    answer('50');
    expect(await sent).toBe('50');
    expect(own.isEcho('', 'uid-1', '50')).toBe(false);
    await expect(own.writing('', 'uid-1', () => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
    expect(own.isEcho('', 'uid-1', '51')).toBe(false);
  });

  test('lastSent: what the last write recorded with sending sent, until forgotten', async () => {
    const own = new OwnWrites<KubeObject>();
    own.sending('', 'n/m', obj('5'));
    expect(own.lastSent('', 'n/m')?.metadata.resourceVersion).toBe('5');
    await own.writing('', 'n/m', () => Promise.resolve());
    expect(own.lastSent('', 'n/m')?.metadata.resourceVersion).toBe('5');
    own.forget('', 'n/m');
    expect(own.lastSent('', 'n/m')).toBeUndefined();
  });

  test('what expired is dropped as new writes come, however few entries there are', () => {
    let now = 1_000;
    const own = new OwnWrites<KubeObject>({ ttlMs: 30_000, nowMs: () => now });
    for (let i = 0; i < 100; i++) own.wrote('', `uid-${i}`, { ...claim('status', 'x'), basedOn: '1', produced: '2' });
    expect(own.size()).toBe(100);
    now += 15_000;
    // Written again: its entry lives on from now, the others expire at 31,000.
    own.wrote('', 'uid-0', { ...claim('status', 'y'), basedOn: '2', produced: '3' });
    now += 15_000;
    own.wrote('', 'uid-new', { ...claim('status', 'x'), basedOn: '1', produced: '2' });
    expect(own.size()).toBe(2);
    expect(own.alreadyWrote('', 'uid-0', { ...claim('status', 'y'), cachedVersion: '3' })).toBe(true);
    expect(own.isEcho('', 'uid-0', '3')).toBe(true);
    expect(own.isEcho('', 'uid-1', '2')).toBe(false);
  });
});
