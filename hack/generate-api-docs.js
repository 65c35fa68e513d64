// Writes docs/api-reference.md from the CRDs in crds/ (themselves generated from packages/api and
// checked by `npm run crds:check`), or with --check fails when the committed page differs.
// One section per kind: group, version, scope, short names, printer columns, then every field of
// spec and status with its type, whether it is required, its constraints and its description;
// CEL rules are listed with their messages.
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

const root = fileURLToPath(new URL('../', import.meta.url));
const crdDir = join(root, 'crds');
const outFile = join(root, 'docs', 'api-reference.md');

/**
 * @typedef {{
 *   type?: string, description?: string, required?: string[], properties?: Record<string, Schema>,
 *   items?: Schema, additionalProperties?: Schema | boolean, enum?: unknown[], default?: unknown,
 *   format?: string, pattern?: string, minimum?: number, maximum?: number, minLength?: number,
 *   maxLength?: number, minItems?: number, maxItems?: number, maxProperties?: number,
 *   'x-kubernetes-validations'?: { rule: string, message?: string }[],
 *   'x-kubernetes-list-type'?: string, 'x-kubernetes-list-map-keys'?: string[],
 *   'x-kubernetes-int-or-string'?: boolean, 'x-kubernetes-preserve-unknown-fields'?: boolean,
 *   anyOf?: Schema[], oneOf?: Schema[]
 * }} Schema
 */

/** Markdown table cell: no line breaks, no bare pipes. @param {string} text */
const cell = (text) => text.replace(/\s*\n\s*/g, ' ').replace(/\|/g, '\\|');

/** @param {Schema} s @returns {string} */
function typeOf(s) {
  if (s['x-kubernetes-int-or-string'] === true) return 'int or string';
  if (s.type === 'array') return `[]${s.items === undefined ? 'any' : typeOf(s.items)}`;
  if (s.type === 'object' && s.additionalProperties !== undefined && s.additionalProperties !== false && s.properties === undefined) {
    return `map[string]${typeof s.additionalProperties === 'object' ? typeOf(s.additionalProperties) : 'any'}`;
  }
  if (s.type === undefined && (s.anyOf ?? s.oneOf) !== undefined) return (s.anyOf ?? s.oneOf ?? []).map(typeOf).join(' or ');
  return s.format === undefined ? (s.type ?? 'any') : `${s.type} (${s.format})`;
}

/** Constraints worth knowing when writing the field. @param {Schema} s */
function constraints(s) {
  const out = [];
  if (s.enum !== undefined) out.push(`one of ${s.enum.map((v) => `\`${String(v)}\``).join(', ')}`);
  if (s.default !== undefined) out.push(`default \`${JSON.stringify(s.default)}\``);
  if (s.minimum !== undefined || s.maximum !== undefined) out.push(`${s.minimum ?? ''}–${s.maximum ?? ''}`);
  if (s.minLength !== undefined) out.push(`min length ${s.minLength}`);
  if (s.maxLength !== undefined) out.push(`max length ${s.maxLength}`);
  if (s.minItems !== undefined) out.push(`min ${s.minItems} items`);
  if (s.maxItems !== undefined) out.push(`max ${s.maxItems} items`);
  if (s.maxProperties !== undefined) out.push(`max ${s.maxProperties} entries`);
  if (s.pattern !== undefined) out.push(`pattern \`${s.pattern}\``);
  if (s['x-kubernetes-list-type'] === 'map')
    out.push(`list keyed by ${(s['x-kubernetes-list-map-keys'] ?? []).map((k) => `\`${k}\``).join(', ')}`);
  if (s['x-kubernetes-list-type'] === 'set') out.push('set (no duplicates)');
  if (s['x-kubernetes-preserve-unknown-fields'] === true) out.push('free-form');
  return out.join('; ');
}

/**
 * Flattens a schema into rows (path, type, required, constraints, description) and CEL rules.
 * @param {Schema} s
 * @param {{ path: string, required: boolean }} at
 * @param {{ rows: string[][], rules: string[][] }} acc
 */
function walk(s, { path, required }, acc) {
  acc.rows.push([`\`${path}\``, typeOf(s), required ? 'yes' : '', constraints(s), s.description ?? '']);
  for (const v of s['x-kubernetes-validations'] ?? []) acc.rules.push([`\`${path}\``, `\`${v.rule}\``, v.message ?? '']);
  const children = s.type === 'array' ? s.items : s;
  if (children === undefined) return;
  const prefix = s.type === 'array' ? `${path}[]` : path;
  if (s.type === 'array') {
    for (const v of children['x-kubernetes-validations'] ?? []) acc.rules.push([`\`${prefix}\``, `\`${v.rule}\``, v.message ?? '']);
  }
  const req = new Set(children.required ?? []);
  for (const [name, child] of Object.entries(children.properties ?? {}))
    walk(child, { path: `${prefix}.${name}`, required: req.has(name) }, acc);
  if (typeof children.additionalProperties === 'object' && children.additionalProperties.properties !== undefined) {
    walk(children.additionalProperties, { path: `${prefix}.<key>`, required: false }, acc);
  }
}

/** @param {string[]} header @param {string[][]} rows */
const table = (header, rows) =>
  [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`)].join('\n');

/**
 * @param {any} crd a CustomResourceDefinition
 */
function section(crd) {
  const { group, names, scope } = crd.spec;
  const parts = [`## ${names.kind}`, ''];
  for (const version of crd.spec.versions) {
    /** @type {Schema} */
    const schema = version.schema.openAPIV3Schema;
    parts.push(
      `\`${group}/${version.name}\`, ${scope === 'Namespaced' ? 'namespaced' : 'cluster-scoped'}${version.storage ? ', storage version' : ''}${version.served ? '' : ' (not served)'}. ` +
        `Plural \`${names.plural}\`${(names.shortNames ?? []).length > 0 ? `, short names ${names.shortNames.map((/** @type {string} */ n) => `\`${n}\``).join(', ')}` : ''}` +
        `${(names.categories ?? []).length > 0 ? `, categories ${names.categories.map((/** @type {string} */ c) => `\`${c}\``).join(', ')}` : ''}.`,
      '',
    );
    if (schema.description !== undefined) parts.push(schema.description, '');
    const columns = version.additionalPrinterColumns ?? [];
    if (columns.length > 0) {
      parts.push(
        `\`kubectl get ${names.plural}\` columns:`,
        '',
        table(
          ['column', 'type', 'JSON path', 'description'],
          columns.map((/** @type {any} */ c) => [c.name, c.type, `\`${c.jsonPath}\``, c.description ?? '']),
        ),
        '',
      );
    }
    if (version.subresources?.status !== undefined)
      parts.push('Status is a subresource (`/status`): controllers write it, a spec update does not change it.', '');
    /** @type {{ rows: string[][], rules: string[][] }} */
    const acc = { rows: [], rules: [] };
    const required = new Set(schema.required ?? []);
    for (const top of ['spec', 'status']) {
      const s = schema.properties?.[top];
      if (s !== undefined) walk(s, { path: top, required: required.has(top) }, acc);
    }
    parts.push(`### ${names.kind} fields`, '', table(['field', 'type', 'required', 'constraints', 'description'], acc.rows), '');
    if (acc.rules.length > 0)
      parts.push(
        `### ${names.kind} validation rules (CEL, checked by the API server)`,
        '',
        table(['on', 'rule', 'message'], acc.rules),
        '',
      );
  }
  return parts.join('\n');
}

const files = (await readdir(crdDir)).filter((f) => f.endsWith('.yaml')).sort();
const crds = await Promise.all(files.map(async (f) => parse(await readFile(join(crdDir, f), 'utf8'))));
const byGroup = new Map();
for (const crd of crds) byGroup.set(crd.spec.group, [...(byGroup.get(crd.spec.group) ?? []), crd]);

const page = [
  '<!-- Generated by hack/generate-api-docs.js from crds/*.yaml. Do not edit; run `npm run docs:generate`. -->',
  '# API reference',
  '',
  'The custom resources metal-l2 defines, generated from their CRD schemas (`crds/`, themselves generated',
  'from `packages/api`). Behaviour is described in [ipam-provider.md](ipam-provider.md) (pools) and',
  '[network-controller.md](network-controller.md) (machine networks); the network modes in [modes/](modes/).',
  "Claims and addresses are Cluster API's own `IPAddressClaim` / `IPAddress` (`ipam.cluster.x-k8s.io`).",
  '',
  ...[...byGroup.entries()].flatMap(([group, list]) => [
    `- \`${group}\`: ${list.map((/** @type {any} */ c) => `[${c.spec.names.kind}](#${c.spec.names.kind.toLowerCase()})`).join(', ')}`,
  ]),
  '',
  ...[...byGroup.values()].flat().map(section),
].join('\n');
const text = `${page.trimEnd()}\n`;

if (process.argv.includes('--check')) {
  const current = await readFile(outFile, 'utf8').catch(() => '');
  if (current !== text) {
    console.error('docs/api-reference.md differs from what the CRDs in crds/ give: run `npm run docs:generate` and commit the result.');
    process.exitCode = 1;
  }
} else {
  await writeFile(outFile, text);
  console.log(`wrote ${outFile}`);
}
