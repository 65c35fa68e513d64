import { beforeAll, describe, expect, test } from '@jest/globals';
import * as k8s from '@kubernetes/client-node';
import { kinds, poolObject } from '@metal-l2/test-support/objects';
import { useIpamNamespace } from './support/ipam-namespace.js';

// The earliest refusal: the CRD schema and its CEL rules, enforced by the API server itself
// before any webhook or controller sees the pool.
const space = useIpamNamespace('ipam-schema', { capi: false });
const { objects } = space;
let ns = '';

beforeAll(() => {
  ns = space.ns;
});

const vrf = { projectID: '5e0f2c5a-8a3b-4a4e-9d4c-1b2c3d4e5f60', metro: 'da', credentialsSecretRef: { name: 'metal' } };

async function refusal(spec: Record<string, unknown>): Promise<string> {
  try {
    await objects.create(kinds.pool, poolObject('bad', spec, ns));
  } catch (err: unknown) {
    if (err instanceof k8s.ApiException && err.code === 422) return String(err.body);
    throw err;
  }
  await objects.delete(kinds.pool, 'bad', ns);
  throw new Error('expected the API server to refuse the pool');
}

describe('pool schema', () => {
  test.each([
    { name: 'no addresses', spec: { addresses: [], prefix: 24 }, want: 'spec.addresses' },
    {
      name: 'an entry that is no IP, CIDR or range',
      spec: { addresses: ['10.0.0.300'], prefix: 24 },
      want: 'must be an IP address, a CIDR or a range',
    },
    { name: 'a prefix above 128', spec: { addresses: ['10.0.0.1'], prefix: 129 }, want: 'spec.prefix' },
    { name: 'a gateway that is no IP', spec: { addresses: ['10.0.0.1'], prefix: 24, gateway: 'router' }, want: 'spec.gateway' },
    {
      name: 'a negative grace period',
      spec: { addresses: ['10.0.0.1'], prefix: 24, addressReuseGracePeriodSeconds: -1 },
      want: 'addressReuseGracePeriodSeconds',
    },
    {
      name: 'a VRF both adopted and created',
      spec: {
        addresses: ['10.0.0.1'],
        prefix: 24,
        vrf: { ...vrf, vrfID: vrf.projectID, create: { name: 'v', ipRanges: ['10.0.0.0/16'] } },
      },
      want: 'exactly one of vrfID',
    },
    { name: 'a VRF neither adopted nor created', spec: { addresses: ['10.0.0.1'], prefix: 24, vrf }, want: 'exactly one of vrfID' },
    {
      name: 'a VRF range outside /8-/29',
      spec: { addresses: ['10.0.0.1'], prefix: 24, vrf: { ...vrf, create: { name: 'v', ipRanges: ['10.0.0.0/30'] } } },
      want: '/8 to /29',
    },
    {
      name: 'a Metal Gateway without a VLAN',
      spec: { addresses: ['10.0.0.1'], prefix: 24, vrf: { ...vrf, vrfID: vrf.projectID, metalGateway: true } },
      want: 'metalGateway needs vxlan',
    },
    {
      name: 'a metro code that is not two letters',
      spec: { addresses: ['10.0.0.1'], prefix: 24, vrf: { ...vrf, vrfID: vrf.projectID, metro: 'Dallas' } },
      want: 'spec.vrf.metro',
    },
  ])('refuses $name', async ({ spec, want }) => {
    expect(await refusal(spec)).toContain(want);
  });

  test('accepts IPs, CIDRs and ranges of IPv6 too', async () => {
    await objects.create(kinds.pool, poolObject('v6', { addresses: ['fd00::10-fd00::20', 'fd00::1:0/120', 'fd00::5'], prefix: 64 }, ns));
  });
});
