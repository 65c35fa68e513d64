// Which events wake which reconciler, as the real controllers declare them (CAPP v0.9.0
// SetupWithManager; CAPI v1.7 Machine controller and its external tracker). None of them enqueues
// on the periodic resync: the real ones resync every 10 minutes, the fixture never does.
import type { CapiCoreVersion, Cluster } from '@metal-l2/api';
import { keyOf, type CacheEvent, type Controller, type KubeObject, type ObjectKey } from '@metal-l2/kube';
import { CapiMachineLabels } from './capp-api.js';
import {
  controllerMachineName,
  hasPausedAnnotation,
  isClusterInfrastructureReady,
  ownerNameOfKind,
  refersToPacketMachine,
} from './capi-objects.js';
import type { FixtureInformers } from './informers.js';

/** predicates.ResourceNotPaused: judged on the new object of an update. */
function notPaused<T extends KubeObject>(event: CacheEvent<T>): boolean {
  return !hasPausedAnnotation(event.object);
}

/** predicates.ClusterUnpaused (the Machine controller's Cluster watch). */
function clusterUnpaused(event: CacheEvent<Cluster>): boolean {
  switch (event.type) {
    case 'add':
      return event.object.spec?.paused !== true;
    case 'update':
      return event.oldObject.spec?.paused === true && event.object.spec?.paused !== true;
    case 'delete':
    case 'resync':
      return false;
  }
}

/** predicates.ClusterUnpausedAndInfrastructureReady (CAPP's Cluster watch). */
function clusterUnpausedAndInfrastructureReady(version: CapiCoreVersion): (event: CacheEvent<Cluster>) => boolean {
  return (event) => {
    const ready = (c: Cluster): boolean => isClusterInfrastructureReady(c, version);
    switch (event.type) {
      case 'add':
        return event.object.spec?.paused !== true && ready(event.object);
      case 'update':
        return (
          (event.oldObject.spec?.paused === true && event.object.spec?.paused !== true) || (!ready(event.oldObject) && ready(event.object))
        );
      case 'delete':
      case 'resync':
        return false;
    }
  };
}

const both =
  <T extends KubeObject>(...predicates: ((event: CacheEvent<T>) => boolean)[]) =>
  (event: CacheEvent<T>): boolean =>
    predicates.every((p) => p(event));

function namespaceOf(obj: KubeObject): string {
  return obj.metadata.namespace ?? '';
}

/**
 * CAPP's watches: PacketMachines themselves; Machines → the PacketMachine they reference
 * (MachineToInfrastructureMapFunc); PacketClusters → the Machines of their owner Cluster (CAPP
 * enqueues Machine names; they equal PacketMachine names); Clusters → their PacketMachines by
 * label. Every watch drops paused objects (WithEventFilter(ResourceNotPaused...)).
 */
export function watchForCapp(controller: Controller, options: { informers: FixtureInformers; capiVersion: CapiCoreVersion }): void {
  const { informers } = options;
  const noResync = { resync: false } as const;
  controller.watch(informers.packetMachines, undefined, { ...noResync, predicate: notPaused });
  controller.watch(
    informers.machines,
    (machine) =>
      refersToPacketMachine(machine.spec.infrastructureRef)
        ? [{ namespace: namespaceOf(machine), name: machine.spec.infrastructureRef.name }]
        : [],
    { ...noResync, predicate: notPaused },
  );
  controller.watch(
    informers.packetClusters,
    (packetCluster): ObjectKey[] => {
      if (packetCluster.metadata.deletionTimestamp !== undefined) return [];
      const clusterName = ownerNameOfKind(packetCluster, 'Cluster');
      if (clusterName === undefined) return [];
      return informers.machines
        .list(namespaceOf(packetCluster))
        .filter((m) => m.metadata.labels?.[CapiMachineLabels.clusterName] === clusterName && m.spec.infrastructureRef.name !== '')
        .map((m) => keyOf(m));
    },
    { ...noResync, predicate: notPaused },
  );
  controller.watch(
    informers.clusters,
    (cluster) =>
      informers.packetMachines
        .list(namespaceOf(cluster))
        .filter((pm) => pm.metadata.labels?.[CapiMachineLabels.clusterName] === cluster.metadata.name)
        .map((pm) => keyOf(pm)),
    { ...noResync, predicate: both(notPaused, clusterUnpausedAndInfrastructureReady(options.capiVersion)) },
  );
}

/**
 * The v1.7 Machine controller's watches that matter here: Machines themselves; PacketMachines →
 * their controller Machine (EnqueueRequestForOwner(Machine, OnlyControllerOwner), so a
 * PacketMachine the Machine does not own yet wakes nobody); Clusters that get unpaused → their
 * Machines.
 */
export function watchForMachineController(controller: Controller, options: { informers: FixtureInformers }): void {
  const { informers } = options;
  const noResync = { resync: false } as const;
  controller.watch(informers.machines, undefined, { ...noResync, predicate: notPaused });
  controller.watch(
    informers.packetMachines,
    (pm) => {
      const owner = controllerMachineName(pm);
      return owner === undefined ? [] : [{ namespace: namespaceOf(pm), name: owner }];
    },
    { ...noResync, predicate: notPaused },
  );
  controller.watch(
    informers.clusters,
    (cluster) =>
      informers.machines
        .list(namespaceOf(cluster))
        .filter((m) => m.spec.clusterName === cluster.metadata.name)
        .map((m) => keyOf(m)),
    { ...noResync, predicate: both(notPaused, clusterUnpaused) },
  );
}
