import { describe, expect, test } from '@jest/globals';
import { FaultInjector, FaultSpecError, parseFaultRules } from './faults.js';

const target = (operationId: string, method: string, path: string) => ({ operationId, method, path });

describe('FaultInjector', () => {
  test('matches by operationId, method and path pattern ({param}, *, **)', () => {
    const f = new FaultInjector('s');
    f.add({ fault: 'server-error', method: 'POST', path: '/ports/{id}/assign' });
    f.add({ fault: 'rate-limit', path: '/projects/**' });
    expect(f.decide(target('assignPort', 'POST', '/ports/p1/assign')).terminal?.kind).toBe('server-error');
    expect(f.decide(target('unassignPort', 'POST', '/ports/p1/unassign')).terminal).toBeUndefined();
    expect(f.decide(target('findPortById', 'GET', '/ports/p1/assign')).terminal).toBeUndefined();
    expect(f.decide(target('createVrf', 'POST', '/projects/x/vrfs')).terminal?.kind).toBe('rate-limit');
  });

  test('the first terminal rule wins and latency rules add up', () => {
    const f = new FaultInjector('s');
    f.add({ fault: 'latency', latencyMs: 10 });
    f.add({ fault: 'drop', operationId: 'a' });
    f.add({ fault: 'latency', latencyMs: 5 });
    f.add({ fault: 'rate-limit', operationId: 'a' });
    const d = f.decide(target('a', 'GET', '/x'));
    expect(d).toMatchObject({ latencyMs: 15, terminal: { kind: 'drop', ruleId: 'fault-2' } });
    expect(f.list().map((r) => r.fired)).toEqual([1, 1, 1, 0]);
  });

  test('times limits firings; probability uses the seeded dice', () => {
    const f = new FaultInjector('s');
    f.add({ fault: 'server-error', times: 2 });
    expect([1, 2, 3].map(() => f.decide(target('a', 'GET', '/x')).terminal?.kind)).toEqual(['server-error', 'server-error', undefined]);
    const roll = (seed: string) => {
      const g = new FaultInjector(seed);
      g.add({ fault: 'server-error', probability: 0.5 });
      return Array.from({ length: 32 }, () => g.decide(target('a', 'GET', '/x')).terminal !== undefined);
    };
    expect(roll('x')).toEqual(roll('x'));
    expect(roll('x')).not.toEqual(roll('y'));
  });

  test.each([
    [{ fault: 'boom' }, 'fault must be one of'],
    [{ fault: 'server-error', status: 404 }, 'status must be a number from 500 to 599'],
    [{ fault: 'rate-limit', probability: 2 }, 'probability'],
    [{ fault: 'drop', times: 0 }, 'times'],
    [{ fault: 'latency', path: '' }, 'path must be a non-empty string'],
    [{ fault: 'server-error', count: 2 }, 'unknown key count'],
    [{ fault: 'latency', html: true }, 'html applies to rate-limit and server-error rules only'],
    [{ fault: 'server-error', message: 'x' }, 'message applies to batch-failed rules only'],
    [{ fault: 'batch-failed', message: '' }, 'message must be a non-empty string'],
    [{ fault: 'batch-failed', operationId: 'assignPort' }, 'batch-failed rules match createPortVlanAssignmentBatch only, not assignPort'],
    [{ fault: 'batch-failed', method: 'GET' }, 'batch-failed rules match POST only, not GET'],
    [{ fault: 'batch-failed', status: 500 }, 'status applies to server-error rules only'],
  ])('refuses %j', (rule, message) => {
    expect(() => parseFaultRules([rule])).toThrow(FaultSpecError);
    expect(() => parseFaultRules([rule])).toThrow(message);
  });

  test('reads a list, {faults: [...]} or a single rule', () => {
    expect(parseFaultRules({ fault: 'drop' })).toHaveLength(1);
    expect(parseFaultRules({ faults: [{ fault: 'drop' }, { fault: 'latency' }] })).toHaveLength(2);
    expect(() => parseFaultRules({ faults: { fault: 'drop' } })).toThrow('faults must be a list of rules');
  });
});
