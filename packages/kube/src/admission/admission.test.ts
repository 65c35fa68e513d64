import { describe, expect, test } from '@jest/globals';
import { admissionResponse, escapeJsonPointer } from './admission.js';

describe('admissionResponse', () => {
  test.each([
    { name: 'an allowed request without a patch', verdict: { allowed: true as const }, want: { uid: 'u', allowed: true } },
    {
      name: 'an allowed request with a patch, base64 JSON',
      verdict: { allowed: true as const, patch: [{ op: 'add' as const, path: '/metadata/annotations', value: {} }] },
      want: {
        uid: 'u',
        allowed: true,
        patchType: 'JSONPatch',
        patch: Buffer.from('[{"op":"add","path":"/metadata/annotations","value":{}}]').toString('base64'),
      },
    },
    { name: 'an empty patch is left out', verdict: { allowed: true as const, patch: [] }, want: { uid: 'u', allowed: true } },
    {
      name: 'a denial carries its message as a 403 status',
      verdict: { allowed: false as const, message: 'spec.ports[0]: no' },
      want: { uid: 'u', allowed: false, status: { code: 403, reason: 'Forbidden', message: 'spec.ports[0]: no' } },
    },
    {
      name: 'warnings travel with an allowed request',
      verdict: { allowed: true as const, warnings: ['eth2 exists on 4-port plans only'] },
      want: { uid: 'u', allowed: true, warnings: ['eth2 exists on 4-port plans only'] },
    },
    {
      name: 'warnings travel with a denial too',
      verdict: { allowed: false as const, message: 'no', warnings: ['w'] },
      want: { uid: 'u', allowed: false, status: { code: 403, reason: 'Forbidden', message: 'no' }, warnings: ['w'] },
    },
    { name: 'no warnings key for an empty list', verdict: { allowed: true as const, warnings: [] }, want: { uid: 'u', allowed: true } },
  ])('$name', ({ verdict, want }) => {
    expect(admissionResponse('u', verdict)).toEqual(want);
  });
});

describe('escapeJsonPointer', () => {
  test.each([
    { name: 'an annotation key with a slash', segment: 'cluster.x-k8s.io/paused', want: 'cluster.x-k8s.io~1paused' },
    { name: 'a tilde before a slash', segment: 'a~/b', want: 'a~0~1b' },
    { name: 'a plain segment', segment: 'annotations', want: 'annotations' },
  ])('$name', ({ segment, want }) => {
    expect(escapeJsonPointer(segment)).toBe(want);
  });
});
