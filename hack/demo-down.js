// `npm run demo:down`: stops what `npm run demo` left running — the webhook configurations it
// registered (or, in the cluster, the helm release: the controllers' pods with their Services,
// webhooks and RBAC), the CAPP fixture, both controllers and the simulator (by the pids recorded in
// .local/demo/state.json, each checked against its command line first), then the local control
// plane and its node, if it has one (`cluster:down`). Safe to run when nothing is up.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { uninstallRelease } from '@metal-l2/local-control-plane';

const root = fileURLToPath(new URL('../', import.meta.url));
// METAL_L2_LOCAL moves the demo's state (kubeconfig, bin/, demo/) elsewhere: test/demo runs the demo
// on a control plane of its own without touching a demo a user has up in .local.
const local = process.env['METAL_L2_LOCAL'] ?? join(root, '.local');
const kubeconfig = join(local, 'kubeconfig');
const stateFile = join(local, 'demo', 'state.json');
const sleep = (/** @type {number} */ ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether `pid` is alive and still runs `script` (a pid may have been reused since). @param {number} pid @param {string} script */
function runs(pid, script) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8')
      .split('\0')
      .some((arg) => arg.endsWith(script));
  } catch {
    return false;
  }
}

/** @type {{ processes?: { name: string; pid: number; script: string }[]; webhooks?: string[]; release?: { name: string; namespace: string } }} */
const state = existsSync(stateFile) ? JSON.parse(readFileSync(stateFile, 'utf8')) : {};

// The release before the host processes, as the webhooks are: no controller acts on what stops next.
if (state.release !== undefined && existsSync(kubeconfig) && existsSync(join(local, 'bin', 'helm'))) {
  const tools = { kubectl: join(local, 'bin', 'kubectl'), helm: join(local, 'bin', 'helm'), kubeconfig };
  try {
    await uninstallRelease(tools, state.release);
    console.log(
      `helm uninstall ${state.release.name}: the controllers' pods, Services, webhooks and RBAC removed (the CRDs stay, as Helm keeps them)`,
    );
  } catch (err) {
    // The node is torn down below either way; say why the release could not go first.
    console.log(`helm uninstall ${state.release.name} failed (${String(err).split('\n')[0]}); the node teardown removes its pods`);
  }
}

if ((state.webhooks ?? []).length > 0 && existsSync(kubeconfig) && existsSync(join(local, 'bin', 'kubectl'))) {
  try {
    execFileSync(
      join(local, 'bin', 'kubectl'),
      ['--kubeconfig', kubeconfig, 'delete', '--ignore-not-found', '--wait=false', '--request-timeout=5s', ...(state.webhooks ?? [])],
      { stdio: 'ignore' },
    );
    console.log('removed the demo webhook configurations');
  } catch {
    // the control plane is already down: nothing to unregister
  }
}

// The fixture first (it creates devices), then the controllers, the simulator last.
for (const proc of [...(state.processes ?? [])].reverse()) {
  if (!runs(proc.pid, proc.script)) {
    console.log(`${proc.name}: not running`);
    continue;
  }
  process.kill(proc.pid, 'SIGTERM');
  const deadline = Date.now() + 10_000;
  while (runs(proc.pid, proc.script) && Date.now() < deadline) await sleep(100);
  if (runs(proc.pid, proc.script)) {
    process.kill(proc.pid, 'SIGKILL');
    console.log(`${proc.name}: pid ${proc.pid} killed (did not stop within 10 s of SIGTERM)`);
  } else {
    console.log(`${proc.name}: pid ${proc.pid} stopped`);
  }
}
rmSync(stateFile, { force: true });

if (!process.argv.includes('--keep-cluster')) {
  const cli = join(root, 'packages', 'local-control-plane', 'dist', 'cli.js');
  try {
    if (existsSync(cli)) execFileSync(process.execPath, [cli, 'down'], { stdio: 'inherit' });
  } catch {
    // cluster:down said why (a node's leftovers, say) on stderr, which this shares.
    process.exitCode = 1;
  }
}
