// Go's text/template, run by the real Go implementation (hack/go-template/main.go, standard
// library only): a TypeScript imitation would differ on exactly the edge cases the user-data
// templates depend on (raw strings inside actions, "<no value>" for missing keys, error texts).
// The binary is built once per version of main.go and cached on disk.
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { access, chmod, mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { constants } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where main.go sits: three levels up from this file (src/ or dist/ of packages/capp-fixture). */
export const GO_TEMPLATE_SOURCE = fileURLToPath(new URL('../../../hack/go-template/main.go', import.meta.url));

export type GoTemplateErrorCode = 'parse' | 'execute';

/** The template did not parse or did not execute; `goMessage` is Go's own error text. */
export class GoTemplateError extends Error {
  override readonly name = 'GoTemplateError';

  constructor(
    readonly code: GoTemplateErrorCode,
    readonly goMessage: string,
  ) {
    super(goMessage);
  }
}

/** Building or running the go-template binary failed (no Go toolchain, a crash): not the template's fault. */
export class GoTemplateToolError extends Error {
  override readonly name = 'GoTemplateToolError';
  readonly code = 'GoTemplateTool';
}

export interface GoTemplateOptions {
  /** main.go to build; default the repository's hack/go-template/main.go. */
  readonly sourcePath?: string;
  /** The metal-l2 cache root; default $METAL_L2_CACHE, else $XDG_CACHE_HOME/metal-l2, else ~/.cache/metal-l2. */
  readonly cacheDir?: string;
}

/** The cache root the hack/ scripts use too. */
export function cacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  const explicit = env['METAL_L2_CACHE'];
  if (explicit !== undefined && explicit !== '') return explicit;
  const xdg = env['XDG_CACHE_HOME'];
  return join(xdg !== undefined && xdg !== '' ? xdg : join(homedir(), '.cache'), 'metal-l2');
}

// One build per binary path per process, however many renders ask at once.
const builds = new Map<string, Promise<string>>();

async function isReadable(path: string): Promise<boolean> {
  try {
    await access(path, constants.R_OK);
    return true;
  } catch {
    return false;
  }
}

async function isExecutable(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

interface RunResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function run(
  command: string,
  options: { args: readonly string[]; cwd?: string; env?: NodeJS.ProcessEnv; stdin?: string },
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, options.args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', reject);
    child.on('close', (code) =>
      resolve({ code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') }),
    );
    // A template the binary refuses early may close stdin before we finish writing.
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.stdin ?? '');
  });
}

async function build(source: string, binary: string): Promise<string> {
  if (await isExecutable(binary)) return binary;
  await mkdir(dirname(binary), { recursive: true });
  // Several processes (parallel jest workers) may build at once: each writes its own file and
  // renames it into place; rename is atomic and every build of one main.go is equivalent.
  const temp = `${binary}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    // With a go.mod beside main.go build the package; a lone main.go builds as a file.
    const hasModule = await isReadable(join(dirname(source), 'go.mod'));
    const result = await run('go', {
      args: ['build', '-o', temp, hasModule ? '.' : source],
      cwd: dirname(source),
      env: { ...process.env, GOFLAGS: '-mod=mod', GOTOOLCHAIN: 'local', CGO_ENABLED: '0' },
    }).catch((err: unknown) => {
      throw new GoTemplateToolError(`cannot run "go build" for ${source} (is Go installed?)`, { cause: err });
    });
    if (result.code !== 0) throw new GoTemplateToolError(`go build of ${source} failed: ${result.stderr.trim()}`);
    await chmod(temp, 0o755);
    await rename(temp, binary);
    return binary;
  } finally {
    await rm(temp, { force: true });
  }
}

/**
 * The path of the go-template binary for the current main.go, building it on first use into
 * <cache>/go-template/<sha256 of main.go>/go-template and reusing it afterwards.
 */
export async function goTemplateBinary(options: GoTemplateOptions = {}): Promise<string> {
  const source = options.sourcePath ?? GO_TEMPLATE_SOURCE;
  let text: Buffer;
  try {
    text = await readFile(source);
  } catch (err: unknown) {
    throw new GoTemplateToolError(`cannot read the go-template source ${source}`, { cause: err });
  }
  const digest = createHash('sha256').update(text).digest('hex');
  const binary = join(options.cacheDir ?? cacheRoot(), 'go-template', digest, 'go-template');
  let pending = builds.get(binary);
  if (pending === undefined) {
    pending = build(source, binary);
    builds.set(binary, pending);
    // A failed build may succeed later (Go installed meanwhile): do not remember failures.
    pending.catch(() => builds.delete(binary));
  }
  return pending;
}

/** How go-template prefixes the two errors of the template itself (CAPP's own wording). */
const errorPrefixes: readonly (readonly [string, GoTemplateErrorCode])[] = [
  ['error parsing userdata template: ', 'parse'],
  ['error executing userdata template: ', 'execute'],
];

/**
 * Executes `text` as a Go text/template named "user-data" with `data` (a map of strings), as
 * CAPP v0.9.0 does with bootstrap data. The data goes through a private temporary file, not the
 * command line: for control-plane machines it holds the Metal token. Throws GoTemplateError
 * ('parse' or 'execute', with Go's message) when the template is at fault, GoTemplateToolError
 * when the tool is.
 */
export async function renderGoTemplate(
  text: string,
  data: Readonly<Record<string, string>>,
  options: GoTemplateOptions = {},
): Promise<string> {
  const binary = await goTemplateBinary(options);
  const dir = await mkdtemp(join(tmpdir(), 'capp-fixture-template-'));
  let result: RunResult;
  try {
    const dataFile = join(dir, 'data.json');
    await writeFile(dataFile, JSON.stringify(data), { mode: 0o600 });
    result = await run(binary, { args: [dataFile], stdin: text }).catch((err: unknown) => {
      throw new GoTemplateToolError(`cannot run ${binary}`, { cause: err });
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  if (result.code === 0) return result.stdout;
  const message = result.stderr.trim();
  for (const [prefix, code] of errorPrefixes) {
    if (message.startsWith(prefix)) throw new GoTemplateError(code, message.slice(prefix.length));
  }
  throw new GoTemplateToolError(`go-template exited with status ${String(result.code)}: ${message}`);
}
