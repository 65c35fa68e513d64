// Render text the way CAPP renders user data (Go text/template, hack/go-template), for tests that
// need to see what a device would really receive. The checker is built once per version of its
// source into ~/.cache/metal-l2/go-template/<sha256 of main.go>/ and reused.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from './paths.js';

const run = promisify(execFile);
const sourceDir = join(repoRoot, 'hack', 'go-template');

let built: Promise<string> | undefined;

/** The path of the built checker; builds it (go build, GOTOOLCHAIN=local) when this version is not cached. */
export function goTemplateBinary(): Promise<string> {
  built ??= build();
  return built;
}

async function build(): Promise<string> {
  const source = await readFile(join(sourceDir, 'main.go'));
  const digest = createHash('sha256').update(source).digest('hex');
  const cacheRoot = process.env['METAL_L2_CACHE'] ?? join(homedir(), '.cache', 'metal-l2');
  const dir = join(cacheRoot, 'go-template', digest);
  const binary = join(dir, 'go-template');
  if (existsSync(binary)) return binary;
  await mkdir(dir, { recursive: true });
  // Build beside the target and rename: parallel test files may build at the same time.
  const partial = `${binary}.${process.pid}.tmp`;
  try {
    await run('go', ['build', '-o', partial, '.'], {
      cwd: sourceDir,
      env: { ...process.env, GOFLAGS: '-mod=mod', GOTOOLCHAIN: 'local', CGO_ENABLED: '0' },
    });
  } catch (err: unknown) {
    throw new Error(`building hack/go-template failed (is Go installed?): ${describe(err)}`, { cause: err });
  }
  await rename(partial, binary);
  return binary;
}

/**
 * Renders `text` as CAPP does: template "user-data", Execute with `data` (missing keys render
 * `<no value>`). Rejects with Go's message on a parse or execute error, as CAPP would fail the machine.
 */
export async function renderGoTemplate(text: string, data: Record<string, string>): Promise<string> {
  const binary = await goTemplateBinary();
  const dir = await mkdtemp(join(tmpdir(), 'go-template-'));
  try {
    const dataFile = join(dir, 'data.json');
    await writeFile(dataFile, JSON.stringify(data));
    return await new Promise<string>((resolve, reject) => {
      const child = execFile(binary, [dataFile], { maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
        if (err !== null) reject(new Error(`go template: ${stderr.trim() || err.message}`, { cause: err }));
        else resolve(stdout);
      });
      child.stdin?.end(text);
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function describe(err: unknown): string {
  if (err instanceof Error) {
    const stderr = (err as Error & { stderr?: unknown }).stderr;
    return typeof stderr === 'string' && stderr.trim() !== '' ? stderr.trim() : err.message;
  }
  return String(err);
}
