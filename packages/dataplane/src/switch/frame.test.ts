import { describe, expect, test } from '@jest/globals';
import { egressFrame, frameVid, tagFrame, untagFrame } from './frame.js';

const dst = Buffer.from('ffffffffffff', 'hex');
const src = Buffer.from('020000000001', 'hex');
const untagged = Buffer.concat([dst, src, Buffer.from('0806', 'hex'), Buffer.from('payload')]);
const tagged1000 = Buffer.concat([dst, src, Buffer.from('810003e8', 'hex'), Buffer.from('0806', 'hex'), Buffer.from('payload')]);

describe('802.1Q frames', () => {
  test.each([
    { name: 'untagged', frame: untagged, want: undefined },
    { name: 'tagged 1000', frame: tagged1000, want: 1000 },
    {
      name: 'priority-tagged (VID 0) counts as untagged',
      frame: Buffer.concat([dst, src, Buffer.from('8100a000', 'hex'), Buffer.from('0800', 'hex')]),
      want: undefined,
    },
    { name: 'too short to carry a tag', frame: Buffer.from('ffff', 'hex'), want: undefined },
  ])('frameVid: $name', ({ frame, want }) => {
    expect(frameVid(frame)).toBe(want);
  });

  test('tagging then untagging gives the frame back', () => {
    expect(tagFrame(untagged, 1000)).toEqual(tagged1000);
    expect(untagFrame(tagged1000)).toEqual(untagged);
    expect(untagFrame(untagged)).toBe(untagged);
  });

  test('retagging replaces the tag; egressFrame untags or tags', () => {
    expect(frameVid(tagFrame(tagged1000, 1001))).toBe(1001);
    expect(tagFrame(tagged1000, 1001).length).toBe(tagged1000.length);
    expect(egressFrame(tagged1000, undefined)).toEqual(untagged);
    expect(egressFrame(untagged, 1000)).toEqual(tagged1000);
  });
});
