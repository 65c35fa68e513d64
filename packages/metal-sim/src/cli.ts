#!/usr/bin/env node
// The metal-l2-sim binary: reads flags, starts the simulator, prints where it listens, and stops
// cleanly on SIGINT/SIGTERM (printing the contract report when validation was on).

import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';
import { CliError, parseCliArgs, USAGE } from './cli-args.js';
import { ContractValidator, defaultSpecPath } from './contract.js';
import { parseFaultRules } from './faults.js';
import { loadSeedFile } from './seed.js';
import { startSimulator } from './server.js';

async function readFaults(value: string): Promise<unknown> {
  const text = /^\s*[[{]/.test(value) ? value : await readFile(value, 'utf8');
  return parse(text);
}

async function main(argv: readonly string[]): Promise<void> {
  const opts = parseCliArgs(argv);
  if (opts.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const seedConfig = opts.seedFile === undefined ? undefined : await loadSeedFile(opts.seedFile);
  const faults = opts.faults === undefined ? [] : parseFaultRules(await readFaults(opts.faults));
  const contract =
    opts.contractSpec === undefined
      ? undefined
      : await ContractValidator.load(opts.contractSpec === '' ? defaultSpecPath() : opts.contractSpec);
  const tls =
    opts.tlsCert === undefined || opts.tlsKey === undefined
      ? undefined
      : { cert: await readFile(opts.tlsCert), key: await readFile(opts.tlsKey) };
  const sim = await startSimulator({
    port: opts.port,
    host: opts.host,
    ...(opts.seed === undefined ? {} : { seed: opts.seed }),
    ...(seedConfig === undefined ? {} : { seedConfig }),
    faults,
    ...(tls === undefined ? {} : { tls }),
    ...(contract === undefined ? {} : { contract }),
    ...(opts.publicUrl === undefined ? {} : { publicUrl: opts.publicUrl }),
    delays: opts.delays,
    ...(opts.rateLimit === undefined ? {} : { rateLimit: opts.rateLimit }),
  });
  const projects = [...sim.store.projects.values()].map((p) => ({ id: p.id, name: p.name }));
  process.stdout.write(`${JSON.stringify({ msg: 'metal-l2-sim listening', url: sim.url, baseUrl: sim.baseUrl, projects })}\n`);

  const stop = (signal: string): void => {
    void sim.close().then(() => {
      if (contract !== undefined) {
        const r = contract.report();
        process.stderr.write(
          `${JSON.stringify({ msg: 'contract report', signal, requestsValidated: r.requestsValidated, responsesValidated: r.responsesValidated, violations: r.violations })}\n`,
        );
      }
      process.exit(0);
    });
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
}

main(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(
    `metal-l2-sim: ${err instanceof CliError ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  if (err instanceof CliError) process.stderr.write(`\n${USAGE}\n`);
  process.exit(2);
});
