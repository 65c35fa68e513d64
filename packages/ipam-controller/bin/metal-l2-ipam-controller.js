#!/usr/bin/env node
// The metal-l2-ipam-controller command. npm links a workspace's bins at install time, when dist/ does not exist
// yet, so the bin is this committed launcher and it loads the build.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const entry = new URL('../dist/main.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write(
    `metal-l2-ipam-controller: ${fileURLToPath(entry)} does not exist; build first: npm run build (in the repository root)\n`,
  );
  process.exit(1);
}
await import(entry.href);
