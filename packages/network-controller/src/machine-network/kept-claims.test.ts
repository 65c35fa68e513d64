import { describe, expect, test } from '@jest/globals';
import { NetworkAnnotations, type IPAddressClaim, type MachineNetwork } from '@metal-l2/api';
import { IndexNames } from '../context.js';
import { keepClaims, keptRecordOf } from './kept-claims.js';
import type { MachineNetworkScope } from './scope.js';

const claim = (keptFor: string | undefined): IPAddressClaim => ({
  apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
  kind: 'IPAddressClaim',
  metadata: {
    name: 'm-bond0-v1000-0',
    namespace: 'ns',
    ...(keptFor === undefined ? {} : { annotations: { [NetworkAnnotations.keptFor]: keptFor } }),
  },
  spec: { poolRef: { apiGroup: 'ipam.metal.x-k8s.io', kind: 'InClusterIPPool', name: 'p' } },
});

describe('keptRecordOf', () => {
  test.each([
    ['a claim that was never kept', undefined, undefined],
    ['the record keepClaims writes', '{"machineNetwork":"m","deviceID":"d-1"}', { machineNetwork: 'm', deviceID: 'd-1' }],
    [
      'the record with the template’s credentials Secret',
      '{"machineNetwork":"m","deviceID":"d-1","credentialsSecret":"metal"}',
      { machineNetwork: 'm', deviceID: 'd-1', credentialsSecret: 'metal' },
    ],
    ['an edited record that is not JSON: not ours to act on', 'device d-1', undefined],
    ['a record without its device', '{"machineNetwork":"m"}', undefined],
    ['a record with an empty machine name', '{"machineNetwork":"","deviceID":"d-1"}', undefined],
  ])('%s', (_name, annotation, want) => {
    expect(keptRecordOf(claim(annotation))).toEqual(want);
  });
});

describe('keepClaims', () => {
  const mn: MachineNetwork = {
    apiVersion: 'network.metal.x-k8s.io/v1alpha1',
    kind: 'MachineNetwork',
    metadata: { name: 'm', namespace: 'ns', uid: 'mn-uid' },
    spec: { templateName: 't' },
    status: {
      claims: [{ name: 'm-a' }, { name: 'm-b' }],
      addresses: [
        { claimName: 'm-a', address: '10.0.0.5' },
        { claimName: 'm-b', address: '10.0.1.5' },
      ],
    },
  } as unknown as MachineNetwork;
  const owned = (name: string): IPAddressClaim => ({
    ...claim(undefined),
    metadata: {
      name,
      namespace: 'ns',
      resourceVersion: '1',
      ownerReferences: [{ apiVersion: 'network.metal.x-k8s.io/v1alpha1', kind: 'MachineNetwork', name: 'm', uid: 'mn-uid' }],
    },
  });

  /** A cache the patches land in at once (as the watch would deliver them), and the patches made. */
  function world(claims: IPAddressClaim[]): { scope: MachineNetworkScope; patched: string[] } {
    const store = new Map(claims.map((c) => [c.metadata.name ?? '', c]));
    const patched: string[] = [];
    const byIndex = (index: string, key: string): IPAddressClaim[] =>
      [...store.values()].filter((c) =>
        index === IndexNames.keptClaimByMachineNetwork
          ? `ns/${keptRecordOf(c)?.machineNetwork ?? ''}` === key
          : (c.metadata.ownerReferences ?? []).some((o) => `ns/${o.name}` === key),
      );
    const patch = (_type: unknown, key: { name: string }, body: { metadata: IPAddressClaim['metadata'] }): Promise<void> => {
      const before = store.get(key.name);
      if (before === undefined) return Promise.reject(new Error('not found'));
      patched.push(key.name);
      store.set(key.name, {
        ...before,
        metadata: {
          ...before.metadata,
          ownerReferences: body.metadata.ownerReferences ?? [],
          annotations: { ...before.metadata.annotations, ...body.metadata.annotations },
        },
      });
      return Promise.resolve();
    };
    const ctx = {
      caches: { claims: { byIndex, get: (k: { name: string }) => store.get(k.name) } },
      client: { patch },
      types: { claim: {} },
      timings: { driftCheckMs: 60_000 },
    };
    const rctx = { logger: { info: () => undefined }, signal: new AbortController().signal };
    const scope = { ctx, rctx, namespace: 'ns', name: 'm', machineNetwork: mn } as unknown as MachineNetworkScope;
    return { scope, patched };
  }

  test('keeps each owned claim for the device and names the addresses kept', async () => {
    const { scope, patched } = world([owned('m-a'), owned('m-b')]);
    expect(await keepClaims(scope, { deviceID: 'd-1', why: '401' })).toEqual(['10.0.0.5 (claim m-a)', '10.0.1.5 (claim m-b)']);
    expect(patched.sort()).toEqual(['m-a', 'm-b']);
  });

  test('a second pass (after a conflicting status write) names the same addresses, though it has nothing left to keep', async () => {
    const { scope, patched } = world([owned('m-a'), owned('m-b')]);
    const first = await keepClaims(scope, { deviceID: 'd-1', why: '401' });
    const second = await keepClaims(scope, { deviceID: 'd-1', why: '401' });
    // The second pass patched nothing: the claims were kept already.
    expect(patched).toHaveLength(2);
    expect(second).toEqual(first);
  });

  test('a claim kept for another device of the same name is not counted', async () => {
    const other = {
      ...claim('{"machineNetwork":"m","deviceID":"d-old"}'),
      metadata: {
        ...claim(undefined).metadata,
        name: 'm-old',
        annotations: { [NetworkAnnotations.keptFor]: '{"machineNetwork":"m","deviceID":"d-old"}' },
      },
    };
    const { scope } = world([owned('m-a'), other]);
    expect(await keepClaims(scope, { deviceID: 'd-1', why: '401' })).toEqual(['10.0.0.5 (claim m-a)']);
  });
});
