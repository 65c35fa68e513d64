/**
 * The object machinery types are the runtime's (packages/kube): one definition for the API types
 * here and for the client, cache and controllers that move them.
 */
import type { V1OwnerReference } from '@kubernetes/client-node';

export { apiVersionOf } from '@metal-l2/kube';
export type { KubeObject, ObjectMeta, ResourceType } from '@metal-l2/kube';
export type OwnerReference = V1OwnerReference;
