import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { GoTemplateError, goTemplateBinary, renderGoTemplate } from '../src/go-template.js';

// The real Go text/template (hack/go-template), built into a private cache for this file.
let cacheDir = '';
beforeAll(async () => {
  cacheDir = await mkdtemp(join(tmpdir(), 'capp-fixture-cache-'));
});
afterAll(async () => {
  await rm(cacheDir, { recursive: true, force: true });
});

describe('renderGoTemplate', () => {
  test('builds the binary once, under the sha256 of main.go, even when asked concurrently', async () => {
    const [a, b] = await Promise.all([goTemplateBinary({ cacheDir }), goTemplateBinary({ cacheDir })]);
    expect(a).toBe(b);
    expect(a).toMatch(new RegExp(`^${cacheDir}/go-template/[0-9a-f]{64}/go-template$`));
    expect((await stat(a)).mode & 0o111).not.toBe(0);
  });

  test.each([
    { name: 'a value is filled in', text: 'v={{ .kubernetesVersion }}', want: 'v=v1.30.1' },
    { name: 'a raw string passes Jinja through', text: 'id={{ `{{ v1.instance_id }}` }}', want: 'id={{ v1.instance_id }}' },
    { name: 'a missing key renders <no value>', text: 'k={{ .apiKey }}', want: 'k=<no value>' },
    { name: 'text without actions is unchanged', text: '#cloud-config\nruncmd: [true]\n', want: '#cloud-config\nruncmd: [true]\n' },
  ])('$name', async ({ text, want }) => {
    expect(await renderGoTemplate(text, { kubernetesVersion: 'v1.30.1' }, { cacheDir })).toBe(want);
  });

  test.each([
    { name: 'an unclosed action does not parse', text: 'x {{ .a ', code: 'parse', message: /unclosed action/ },
    { name: 'calling a missing function does not parse', text: '{{ nope }}', code: 'parse', message: /function "nope" not defined/ },
    {
      name: 'indexing a string out of range fails to execute',
      text: '{{ index .a 5 }}',
      code: 'execute',
      message: /executing "user-data"/,
    },
  ])('$name', async ({ text, code, message }) => {
    const err = await renderGoTemplate(text, { a: 'x' }, { cacheDir }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GoTemplateError);
    expect((err as GoTemplateError).code).toBe(code);
    expect((err as GoTemplateError).goMessage).toMatch(message);
  });
});
