import { describe, expect, test } from '@jest/globals';
import { DEFAULT_SEED, parseSeed, SeedError } from './seed.js';

describe('parseSeed', () => {
  test('reads YAML and JSON; missing sections fall back to the defaults', () => {
    const yaml = parseSeed('projects:\n  - name: p\ntokens:\n  - token: t\n    projects: [p]\n');
    expect(yaml.projects).toEqual([{ name: 'p' }]);
    expect(yaml.tokens).toEqual([{ token: 't', projects: ['p'] }]);
    expect(yaml.metros).toEqual(DEFAULT_SEED.metros);
    expect(parseSeed('{"plans":[{"slug":"x","ports":4}]}').plans).toEqual([{ slug: 'x', ports: 4 }]);
    expect(yaml.operatingSystems).toEqual(DEFAULT_SEED.operatingSystems);
    expect(parseSeed('operatingSystems:\n  - slug: nixos_24_05').operatingSystems).toEqual([{ slug: 'nixos_24_05' }]);
  });

  test('the default catalogue has every operating system the repository creates devices with', () => {
    const slugs = (DEFAULT_SEED.operatingSystems ?? []).map((o) => o.slug);
    for (const used of ['ubuntu_22_04', 'ubuntu_24_04', 'debian_12', 'flatcar_stable', 'custom_ipxe']) expect(slugs).toContain(used);
  });

  test.each([
    ['- a list', 'must be a mapping'],
    ['plans:\n  - slug: x\n    ports: 3', 'plans[0].ports must be 2 or 4'],
    ['tokens:\n  - projects: [a]', 'tokens[0].token is required'],
    ['metros: nope', 'metros must be a list'],
    ['limits:\n  vrfsPerProject: -1', 'vrfsPerProject'],
    ['{bad', 'not valid YAML or JSON'],
    // A misspelled `projects` would otherwise grant the token every project.
    ['tokens:\n  - token: t\n    project: [p]', 'seed: tokens[0]: unknown key project (known: token, projects)'],
    ['metro:\n  - code: da', 'seed: the document: unknown key metro'],
    ['limits:\n  vrfs: 2', 'seed: limits: unknown key vrfs'],
    ['operatingSystems:\n  - name: Ubuntu', 'operatingSystems[0].slug is required'],
  ])('refuses %j', (text, message) => {
    expect(() => parseSeed(text)).toThrow(SeedError);
    expect(() => parseSeed(text)).toThrow(message);
  });
});
