// The README's "A controller in a few lines", as a file that compiles: `npm run typecheck` checks
// it against the package's real types, and hack/check-readme-examples.js fails when the README's
// block is not the region below, word for word. The lines above the region give the names the
// README leaves to the reader: the flags, a logger, a namespace, the resource types and a reconciler.

import {
  Controller,
  Informer,
  KubeClient,
  Manager,
  createLogger,
  createRuntimeMetrics,
  done,
  leaderIdentity,
  loadKubeConfig,
  type KubeObject,
  type Reconciler,
  type ResourceType,
} from '@metal-l2/kube';

interface InClusterIPPool extends KubeObject {
  spec: { addresses: string[] };
}
interface IPAddressClaim extends KubeObject {
  metadata: KubeObject['metadata'] & { namespace: string };
  spec: { poolRef: { name: string } };
}

const flags = { kubeconfig: process.env['KUBECONFIG'], leaderElect: true };
const namespace = 'metal-l2-system';
const logger = createLogger({ level: 'info', format: 'json' });
const ipam = { group: 'ipam.cluster.x-k8s.io', version: 'v1beta1', namespaced: true } as const;
const poolType: ResourceType = { ...ipam, kind: 'InClusterIPPool', plural: 'inclusterippools' };
const claimType: ResourceType = { ...ipam, kind: 'IPAddressClaim', plural: 'ipaddressclaims' };
const reconciler: Reconciler = { reconcile: () => Promise.resolve(done()) };

// #region readme
const kc = await loadKubeConfig({ kubeconfig: flags.kubeconfig });
const client = KubeClient.fromKubeConfig(kc, { fieldManager: 'metal-l2-ipam-controller' });
const metrics = createRuntimeMetrics();
const pools = new Informer<InClusterIPPool>({ client, type: poolType, logger, metrics });
const claims = new Informer<IPAddressClaim>({ client, type: claimType, logger, metrics });
const controller = new Controller({ name: 'inclusterippool', reconciler, concurrency: 4, logger, metrics });
controller.watch(pools);
controller.watch(claims, (claim) => [{ namespace: claim.metadata.namespace, name: claim.spec.poolRef.name }]);
const manager = new Manager({
  logger,
  metrics,
  metricsBindAddress: ':8080',
  healthProbeBindAddress: ':8081',
  ...(flags.leaderElect ? { leaderElection: { client, namespace, name: 'metal-l2-ipam-controller', identity: leaderIdentity() } } : {}),
});
manager.addController(controller);
await manager.start(); // rejects with LeadershipLostError when the lease is lost: exit non-zero
// #endregion readme
