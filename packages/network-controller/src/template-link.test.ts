import { describe, expect, test } from '@jest/globals';
import type { PacketMachine, PacketMachineTemplate } from '@metal-l2/api';
import { linkStateOf, resolveTemplateName, templateLinkOf, templateNameFor } from './template-link.js';

const NS = 'team-a';
const TEMPLATE = 'network.metal.x-k8s.io/template';
const FROM_NAME = 'cluster.x-k8s.io/cloned-from-name';
const FROM_GROUP_KIND = 'cluster.x-k8s.io/cloned-from-groupkind';
const PMT_GROUP_KIND = 'PacketMachineTemplate.infrastructure.cluster.x-k8s.io';

function machine(annotations: Record<string, string>, namespace = NS): PacketMachine {
  return { metadata: { namespace, name: 'm-1', annotations }, spec: {} };
}

function packetMachineTemplate(name: string, annotations: Record<string, string> = {}, namespace = NS): PacketMachineTemplate {
  return { metadata: { namespace, name, annotations }, spec: { template: { spec: {} } } };
}

const templates = [
  packetMachineTemplate('workers', { [TEMPLATE]: 'l2-workers' }),
  packetMachineTemplate('plain'),
  packetMachineTemplate('blank', { [TEMPLATE]: '' }),
  packetMachineTemplate('workers', { [TEMPLATE]: 'elsewhere' }, 'team-b'),
];
const lookup = (namespace: string, name: string): PacketMachineTemplate | undefined =>
  templates.find((t) => t.metadata.namespace === namespace && t.metadata.name === name);

interface Case {
  name: string;
  annotations: Record<string, string>;
  want: string | undefined;
}

describe('templateNameFor', () => {
  test.each<Case>([
    { name: 'the machine’s own annotation', annotations: { [TEMPLATE]: 'direct' }, want: 'direct' },
    {
      name: 'the machine’s own annotation wins over its PacketMachineTemplate’s',
      annotations: { [TEMPLATE]: 'direct', [FROM_NAME]: 'workers', [FROM_GROUP_KIND]: PMT_GROUP_KIND },
      want: 'direct',
    },
    {
      name: 'cloned from an annotated PacketMachineTemplate',
      annotations: { [FROM_NAME]: 'workers', [FROM_GROUP_KIND]: PMT_GROUP_KIND },
      want: 'l2-workers',
    },
    { name: 'cloned-from-groupkind absent: the name is still followed', annotations: { [FROM_NAME]: 'workers' }, want: 'l2-workers' },
    {
      name: 'cloned from another kind is not followed',
      annotations: { [FROM_NAME]: 'workers', [FROM_GROUP_KIND]: 'DockerMachineTemplate.infrastructure.cluster.x-k8s.io' },
      want: undefined,
    },
    {
      name: 'cloned from a PacketMachineTemplate without the annotation',
      annotations: { [FROM_NAME]: 'plain', [FROM_GROUP_KIND]: PMT_GROUP_KIND },
      want: undefined,
    },
    { name: 'cloned from a PacketMachineTemplate whose annotation is empty', annotations: { [FROM_NAME]: 'blank' }, want: undefined },
    {
      name: 'cloned from a PacketMachineTemplate that is gone',
      annotations: { [FROM_NAME]: 'gone', [FROM_GROUP_KIND]: PMT_GROUP_KIND },
      want: undefined,
    },
    {
      name: 'an empty own annotation falls through to the PacketMachineTemplate',
      annotations: { [TEMPLATE]: ' ', [FROM_NAME]: 'workers' },
      want: 'l2-workers',
    },
    { name: 'no annotations at all', annotations: {}, want: undefined },
  ])('$name', async ({ annotations, want }) => {
    expect(templateNameFor(machine(annotations), lookup)).toBe(want);
    expect(await resolveTemplateName(machine(annotations), (ns, name) => Promise.resolve(lookup(ns, name)))).toBe(want);
  });

  test('follows the link in the machine’s own namespace only', () => {
    expect(templateNameFor(machine({ [FROM_NAME]: 'workers' }, 'team-b'), lookup)).toBe('elsewhere');
  });

  test('looks nothing up for a machine with its own annotation or without a link', async () => {
    const asked: string[] = [];
    const spy = (ns: string, name: string): Promise<PacketMachineTemplate | undefined> => {
      asked.push(`${ns}/${name}`);
      return Promise.resolve(undefined);
    };
    await resolveTemplateName(machine({ [TEMPLATE]: 'direct', [FROM_NAME]: 'workers' }), spy);
    await resolveTemplateName(machine({}), spy);
    expect(asked).toEqual([]);
  });

  test('a failing lookup is the caller’s to handle', async () => {
    await expect(resolveTemplateName(machine({ [FROM_NAME]: 'workers' }), () => Promise.reject(new Error('forbidden')))).rejects.toThrow(
      'forbidden',
    );
  });
});

describe('templateLinkOf', () => {
  test('names the PacketMachineTemplate to read for a cloned machine', () => {
    expect(templateLinkOf(machine({ [FROM_NAME]: 'workers', [FROM_GROUP_KIND]: PMT_GROUP_KIND }))).toEqual({
      kind: 'cloned',
      packetMachineTemplate: { namespace: NS, name: 'workers' },
    });
  });
  test('a machine without a namespace cannot follow its clone link', () => {
    expect(templateLinkOf({ metadata: { name: 'm', annotations: { [FROM_NAME]: 'workers' } } })).toEqual({ kind: 'none' });
  });
});

describe('linkStateOf', () => {
  test('its own annotation links it; none and a clone of an unannotated template leave it unlinked', () => {
    expect(linkStateOf(machine({ [TEMPLATE]: 'mine' }), lookup)).toEqual({ kind: 'linked', templateName: 'mine' });
    expect(linkStateOf(machine({ [FROM_NAME]: 'workers', [FROM_GROUP_KIND]: PMT_GROUP_KIND }), lookup)).toEqual({
      kind: 'linked',
      templateName: 'l2-workers',
    });
    expect(linkStateOf(machine({}), lookup)).toEqual({ kind: 'unlinked' });
    expect(linkStateOf(machine({ [FROM_NAME]: 'plain', [FROM_GROUP_KIND]: PMT_GROUP_KIND }), lookup)).toEqual({ kind: 'unlinked' });
  });

  test('a clone of a PacketMachineTemplate that is not found is unknown, not unlinked', () => {
    expect(linkStateOf(machine({ [FROM_NAME]: 'gone', [FROM_GROUP_KIND]: PMT_GROUP_KIND }), lookup)).toEqual({
      kind: 'unknown',
      packetMachineTemplate: { namespace: NS, name: 'gone' },
    });
  });
});
