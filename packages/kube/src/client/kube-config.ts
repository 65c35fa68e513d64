import { readFileSync } from 'node:fs';
import { KubeConfig } from '@kubernetes/client-node';

const serviceAccountNamespaceFile = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

/**
 * The kubeconfig a controller binary uses: the file given by `--kubeconfig`; otherwise the
 * pod's service account when running in a cluster; otherwise the default kubeconfig
 * ($KUBECONFIG, ~/.kube/config). Called from main, which owns the environment.
 */
export function loadKubeConfig(options: { kubeconfig?: string | undefined } = {}): KubeConfig {
  const kc = new KubeConfig();
  if (options.kubeconfig !== undefined && options.kubeconfig !== '') kc.loadFromFile(options.kubeconfig);
  else if ((process.env['KUBERNETES_SERVICE_HOST'] ?? '') !== '') kc.loadFromCluster();
  else kc.loadFromDefault();
  return kc;
}

/**
 * The namespace to keep the leader-election Lease in when none is configured: the pod's own
 * (service account mount), else the kubeconfig context's, else "default".
 */
export function defaultNamespace(kc: KubeConfig): string {
  try {
    const fromPod = readFileSync(serviceAccountNamespaceFile, 'utf8').trim();
    if (fromPod !== '') return fromPod;
  } catch {
    // Not in a pod.
  }
  return kc.getContextObject(kc.getCurrentContext())?.namespace ?? 'default';
}
