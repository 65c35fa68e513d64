#!/usr/bin/env node
// metal-l2-capp-fixture: reads flags, builds the logger and clients, runs the fixture until SIGINT/SIGTERM.
import { readFile } from 'node:fs/promises';
import { createLogger, loadKubeConfig } from '@metal-l2/kube';
import { parseFlags, usage, type CappFixtureFlags } from './cli-flags.js';
import { startCappFixture } from './fixture.js';

async function main(): Promise<number> {
  let flags: CappFixtureFlags | 'help';
  try {
    flags = parseFlags(process.argv.slice(2), process.env);
  } catch (err: unknown) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n\n${usage}`);
    return 2;
  }
  if (flags === 'help') {
    process.stdout.write(usage);
    return 0;
  }
  const logger = createLogger({ level: flags.logLevel, format: flags.logFormat, fields: { component: 'metal-l2-capp-fixture' } });
  const token = flags.token.kind === 'value' ? flags.token.value : (await readFile(flags.token.path, 'utf8')).trim();
  if (token === '') {
    logger.error('the Metal token is empty', {});
    return 2;
  }
  const fixture = await startCappFixture({
    kubeConfig: await loadKubeConfig({ kubeconfig: flags.kubeconfig }),
    metal: { baseUrl: flags.metalApiUrl, token },
    logger,
    playMachineController: flags.playMachineController,
    ...(flags.namespace !== undefined ? { namespace: flags.namespace } : {}),
    ...(flags.capiVersion !== undefined ? { capiVersion: flags.capiVersion } : {}),
    ...(flags.pollIntervalMs !== undefined ? { pollIntervalMs: flags.pollIntervalMs } : {}),
  });
  await new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  logger.info('stopping', {});
  await fixture.stop();
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`metal-l2-capp-fixture failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  },
);
