// Fails when a README's code block has drifted from the example file it was taken from. A block
// marked `<!-- example: <path> -->` (path relative to the README) must equal, line for line, the
// `// #region readme` ... `// #endregion readme` part of that file; `npm run typecheck` compiles the
// file, so the README shows code that builds against the packages as they are.
import { readFile, readdir } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const MARKER = /<!-- example: (\S+) -->\n```ts\n([\s\S]*?)```/g;

/** @param {string} text @param {string} file */
function region(text, file) {
  const match = /\/\/ #region readme\n([\s\S]*?)\/\/ #endregion readme/.exec(text);
  if (match?.[1] === undefined) throw new Error(`${file} has no "// #region readme" ... "// #endregion readme" part`);
  return match[1];
}

/** @returns {Promise<string[]>} the READMEs that may carry examples: the root one and each package's. */
async function readmes() {
  const packages = await readdir(join(root, 'packages'), { withFileTypes: true });
  return [join(root, 'README.md'), ...packages.filter((d) => d.isDirectory()).map((d) => join(root, 'packages', d.name, 'README.md'))];
}

/** @type {string[]} */
const problems = [];
let checked = 0;
for (const readme of await readmes()) {
  const text = await readFile(readme, 'utf8').catch(() => '');
  for (const [, path = '', block = ''] of text.matchAll(MARKER)) {
    const example = join(dirname(readme), path);
    const want = region(await readFile(example, 'utf8'), relative(root, example));
    checked++;
    if (block !== want) problems.push(`${relative(root, readme)}: the block marked ${path} differs from its readme region`);
  }
}
if (problems.length > 0) {
  console.error(`${problems.join('\n')}\nCopy the region into the README (or edit both); the file is what typecheck compiles.`);
  process.exitCode = 1;
} else {
  console.log(`README examples match their compiled files (${checked} checked)`);
}
