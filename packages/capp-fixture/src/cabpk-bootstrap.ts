// What Cluster API's kubeadm bootstrap provider (CABPK) puts in a worker's bootstrap Secret, in
// the shape our user-data injection and CAPP's Go templating both read: a Jinja header, a
// write_files entry with the kubeadm JoinConfiguration (CAPP's escaped cloud-init variables in it),
// runcmd with CAPP's Go template action. For tests, the bench and anything else that makes machines.

/** A CABPK-shaped bootstrap document for `machine` (its runcmd echoes the name). */
export function cabpkCloudConfig(machine: string): string {
  return [
    '## template: jinja',
    '#cloud-config',
    'write_files:',
    '-   path: /run/kubeadm/kubeadm-join-config.yaml',
    '    owner: root:root',
    "    permissions: '0640'",
    '    content: |',
    '      apiVersion: kubeadm.k8s.io/v1beta3',
    '      kind: JoinConfiguration',
    '      nodeRegistration:',
    "        name: '{{ `{{ ds.meta_data.local_hostname }}` }}'",
    '        kubeletExtraArgs:',
    '          provider-id: equinixmetal://{{ `{{ v1.instance_id }}` }}',
    'runcmd:',
    '  - "MINOR=$(echo {{ .kubernetesVersion }} | cut -d. -f2)"',
    '  - "kubeadm join --config /run/kubeadm/kubeadm-join-config.yaml  && echo success > /run/cluster-api/bootstrap-success.complete"',
    `  - "echo ${machine} joined"`,
    '',
  ].join('\n');
}
