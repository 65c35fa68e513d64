import { afterAll, beforeAll, expect } from '@jest/globals';
import type * as k8s from '@kubernetes/client-node';
import type { Logger } from '@metal-l2/kube';
import type { Simulator } from '@metal-l2/metal-sim';
import { expectNoContractViolations } from '@metal-l2/test-support/contract';
import { kinds } from '@metal-l2/test-support/objects';
import { timeouts } from '@metal-l2/test-support/timeouts';
import { waitFor } from '@metal-l2/test-support/wait-for';
import type { RunningIpamController } from '../../src/start.js';
import { useIpamNamespace, type IpamNamespace } from './ipam-namespace.js';
import { TOKEN, capturedLogger, createCredentials, runVrfController, startMetal, type VrfControllerOptions } from './metal.js';

type ControllerExtras = Omit<VrfControllerOptions, 'sim' | 'logger'>;

export interface VrfNamespace extends IpamNamespace {
  /** The file's Metal simulator; there once beforeAll ran. */
  readonly sim: Simulator;
  /** Every controller of the file logs here; the lines are searched for the token after the file. */
  readonly logger: Logger;
  readonly lines: readonly string[];
  /**
   * A VRF controller for `namespace` talking to the file's simulator, stopped after the file; on
   * the file's control plane unless `kubeConfig` names another.
   */
  runController(namespace: string, options?: ControllerExtras & { kubeConfig?: k8s.KubeConfig }): Promise<RunningIpamController>;
  /** One more namespace, with the credentials Secret and a VRF controller of its own. */
  namespaceWithController(prefix: string, options?: ControllerExtras): Promise<string>;
}

/**
 * A VRF-backed pool test file's setup: useIpamNamespace plus a Metal simulator for the file (its
 * OpenAPI contract checked on every call). After the file, while the controllers still run, every
 * claim and pool is deleted so that they release what they made in Metal; then the controllers
 * stop and the namespaces go; last, the file fails if any call broke the contract or the token
 * showed up in a log line.
 */
export function useVrfNamespace(prefix: string, options: { seed: string }): VrfNamespace {
  const { logger, lines } = capturedLogger();
  let sim: Simulator | undefined;
  const space = useIpamNamespace(prefix, { beforeTeardown: () => releaseEverything() });

  async function releaseEverything(): Promise<void> {
    sim?.faults.clear();
    const { objects } = space;
    for (const ns of space.namespaces) {
      for (const claim of await objects.list(kinds.claim(), ns)) await objects.delete(kinds.claim(), claim.metadata.name, ns);
      for (const pool of await objects.list(kinds.pool, ns)) await objects.delete(kinds.pool, pool.metadata.name, ns);
    }
    // Best effort: a pool still deleting after this is the test's own failure, reported there.
    await waitFor(
      'every pool of the file gone',
      async () => {
        for (const ns of space.namespaces) if ((await objects.list(kinds.pool, ns)).length > 0) return false;
        return true;
      },
      { timeoutMs: timeouts.claimBound },
    ).catch(() => undefined);
  }

  beforeAll(async () => {
    sim = await startMetal({ seed: options.seed });
  });
  afterAll(async () => {
    await sim?.contract?.close();
    await sim?.close();
    if (sim !== undefined) expectNoContractViolations(sim.contract);
    expect(lines.join('')).not.toContain(TOKEN);
  });

  const simulator = (): Simulator => {
    if (sim === undefined) throw new Error('the simulator is there once beforeAll ran');
    return sim;
  };
  const runController = async (namespace: string, extra: ControllerExtras & { kubeConfig?: k8s.KubeConfig } = {}) => {
    const { kubeConfig, ...rest } = extra;
    return space.stopAfterAll(await runVrfController(kubeConfig ?? space.kc, namespace, { sim: simulator(), logger, ...rest }));
  };

  const own = {
    get sim(): Simulator {
      return simulator();
    },
    logger,
    lines,
    runController,
    async namespaceWithController(extraPrefix: string, extra: ControllerExtras = {}): Promise<string> {
      const ns = await space.extraNamespace(extraPrefix);
      await runController(ns, extra);
      await createCredentials(space.kc, ns);
      return ns;
    },
  };
  // The file's namespace helper underneath (its getters read once beforeAll ran), with these on top.
  return Object.create(space, Object.getOwnPropertyDescriptors(own)) as VrfNamespace;
}
