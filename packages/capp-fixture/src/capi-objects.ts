// Reading Cluster API objects the same way in both served versions (v1beta1 for CAPI v1.7,
// v1beta2 for v1.10+), and the predicates CAPI's util packages apply to them. Pure.
import {
  CAPI_CORE_GROUP,
  CAPP_GROUP,
  CapiAnnotations,
  type CapiCoreVersion,
  type Cluster,
  type ContractReference,
  type Machine,
} from '@metal-l2/api';
import type { KubeObject, ObjectKey } from '@metal-l2/kube';
import { CapiMachineLabels } from './capp-api.js';

/** The API group of a reference, whichever way the version spells it. */
export function groupOf(ref: ContractReference): string {
  if (ref.apiGroup !== undefined) return ref.apiGroup;
  const apiVersion = ref.apiVersion ?? '';
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/** True when `ref` names a PacketMachine (CAPI compares group and kind, not the version). */
export function refersToPacketMachine(ref: ContractReference | undefined): boolean {
  return ref !== undefined && ref.kind === 'PacketMachine' && groupOf(ref) === CAPP_GROUP && ref.name !== '';
}

/** annotations.HasPaused: the key's presence counts, its value does not. */
export function hasPausedAnnotation(obj: KubeObject): boolean {
  return obj.metadata.annotations?.[CapiAnnotations.paused] !== undefined;
}

/** annotations.IsPaused(cluster, obj): the Cluster's spec.paused or the object's annotation. */
export function isPaused(cluster: Cluster | undefined, obj: KubeObject): boolean {
  return cluster?.spec?.paused === true || hasPausedAnnotation(obj);
}

/** Cluster.status.infrastructureReady (v1beta1) or status.initialization.infrastructureProvisioned (v1beta2). */
export function isClusterInfrastructureReady(cluster: Cluster, version: CapiCoreVersion): boolean {
  return version === 'v1beta1'
    ? cluster.status?.infrastructureReady === true
    : cluster.status?.initialization?.infrastructureProvisioned === true;
}

/** util.IsControlPlaneMachine: the control-plane label is present (any value). */
export function isControlPlaneMachine(machine: Machine): boolean {
  return machine.metadata.labels?.[CapiMachineLabels.controlPlane] !== undefined;
}

/** The Cluster a Machine names in its cluster-name label (how CAPP finds it), if labelled. */
export function clusterKeyFromLabel(obj: KubeObject): ObjectKey | undefined {
  const name = obj.metadata.labels?.[CapiMachineLabels.clusterName];
  const namespace = obj.metadata.namespace;
  if (name === undefined || name === '' || namespace === undefined) return undefined;
  return { namespace, name };
}

/** The name of the owner of `kind` in CAPI's core group, as util.GetOwnerMachine/GetOwnerCluster find it. */
export function ownerNameOfKind(obj: KubeObject, kind: 'Machine' | 'Cluster'): string | undefined {
  const owner = obj.metadata.ownerReferences?.find((ref) => ref.kind === kind && groupOfApiVersion(ref.apiVersion) === CAPI_CORE_GROUP);
  return owner?.name;
}

/** The Machine that is the controller owner, as EnqueueRequestForOwner(Machine, OnlyControllerOwner) sees it. */
export function controllerMachineName(obj: KubeObject): string | undefined {
  const owner = obj.metadata.ownerReferences?.find(
    (ref) => ref.controller === true && ref.kind === 'Machine' && groupOfApiVersion(ref.apiVersion) === CAPI_CORE_GROUP,
  );
  return owner?.name;
}

export function groupOfApiVersion(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}
