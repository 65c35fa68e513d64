import { describe, expect, test } from '@jest/globals';
import type { AdmissionRequest } from '@metal-l2/kube';
import { templateAdmissionHandler } from './template-webhook.js';

const bad = { ports: [{ name: 'eth1', vlans: [{ vxlan: 1000 }] }] };
const good = { ports: [{ name: 'bond0', vlans: [{ vxlan: 1000 }] }] };
const fourPort = { ports: [{ name: 'bond1', layer2: true, vlans: [{ vxlan: 1000 }] }] };

function request(operation: AdmissionRequest['operation'], spec: unknown, oldSpec?: unknown): AdmissionRequest {
  const obj = (s: unknown): unknown => ({ metadata: { namespace: 'ns', name: 't' }, spec: s });
  return {
    uid: 'u',
    operation,
    kind: { group: 'network.metal.x-k8s.io', version: 'v1alpha1', kind: 'MachineNetworkTemplate' },
    namespace: 'ns',
    object: obj(spec),
    ...(oldSpec === undefined ? {} : { oldObject: obj(oldSpec) }),
  };
}

describe('templateAdmissionHandler', () => {
  const handler = templateAdmissionHandler();

  test.each([
    { name: 'a valid template is created', req: request('CREATE', good), want: { allowed: true } },
    {
      name: 'an invalid template is refused with every issue and its path',
      req: request('CREATE', bad),
      want: {
        allowed: false,
        message: expect.stringMatching(/^MachineNetworkTemplate ns\/t is invalid: spec\.ports\[0\]\.vlans: eth1 stays in bond0/),
      },
    },
    {
      name: 'a 4-port template is allowed with warnings',
      req: request('CREATE', fourPort),
      want: { allowed: true, warnings: [expect.stringContaining('bond1')] },
    },
    { name: 'a metadata-only update of an old invalid template passes', req: request('UPDATE', bad, bad), want: { allowed: true } },
    {
      name: 'an update that changes the spec is validated',
      req: request('UPDATE', bad, good),
      want: { allowed: false, message: expect.stringContaining('eth1 stays in bond0') },
    },
    { name: 'a delete passes', req: request('DELETE', bad), want: { allowed: true } },
    {
      name: 'a request without a spec is refused',
      req: request('CREATE', undefined),
      want: { allowed: false, message: 'the request carries no MachineNetworkTemplate with a spec' },
    },
  ])('$name', async ({ req, want }) => {
    expect(await handler(req)).toEqual(want);
  });
});
