export { defaultNamespace, loadKubeConfig } from './kube-config.js';
export type { ClusterAccess } from './kube-config.js';
export { KubeClient } from './kube-client.js';
export type {
  DeleteOptions,
  KubeClientOptions,
  ListItemsOptions,
  ListOptions,
  ListResult,
  PatchOptions,
  RequestOptions,
  WatchOptions,
  WriteOptions,
} from './kube-client.js';
export type { WatchEvent } from './watch-stream.js';
