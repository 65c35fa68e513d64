import { describe, expect, test } from '@jest/globals';
import { NetworkAnnotations, type IPAddressClaim } from '@metal-l2/api';
import { keptRecordOf } from './kept-claims.js';

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
