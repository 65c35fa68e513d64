import { stringify } from 'yaml';

export interface AdminCredentials {
  readonly server: string;
  readonly caData: string;
  readonly token: string;
}

/** A kubeconfig for the static admin token (group system:masters) of the local control plane. */
export function renderKubeconfig(creds: AdminCredentials, contextName = 'metal-l2-local'): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: contextName, cluster: { server: creds.server, 'certificate-authority-data': creds.caData } }],
    users: [{ name: 'admin', user: { token: creds.token } }],
    contexts: [{ name: contextName, context: { cluster: contextName, user: 'admin', namespace: 'default' } }],
    'current-context': contextName,
  });
}
