{{/*
A controller's ServiceAccount, its ClusterRole (rules given by the caller) bound cluster-wide,
and the Role for its leader-election Lease in the release namespace. Call with
(dict "root" $ "key" "ipam" "rules" "<yaml list>").
*/}}
{{- define "metal-l2.rbac" -}}
{{- $root := .root -}}
{{- $name := printf "%s-%s" (include "metal-l2.fullname" $root) .key -}}
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ $name }}
  namespace: {{ $root.Release.Namespace }}
  labels: {{- include "metal-l2.labels" $root | nindent 4 }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {{ $name }}
  labels: {{- include "metal-l2.labels" $root | nindent 4 }}
rules: {{- .rules | nindent 2 }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: {{ $name }}
  labels: {{- include "metal-l2.labels" $root | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: {{ $name }}
subjects:
  - kind: ServiceAccount
    name: {{ $name }}
    namespace: {{ $root.Release.Namespace }}
---
# Leader election: the controller reads, creates and renews (PUT) its own Lease, nothing else.
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {{ $name }}-leader-election
  namespace: {{ $root.Release.Namespace }}
  labels: {{- include "metal-l2.labels" $root | nindent 4 }}
rules:
  - apiGroups: [coordination.k8s.io]
    resources: [leases]
    verbs: [get, create, update]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ $name }}-leader-election
  namespace: {{ $root.Release.Namespace }}
  labels: {{- include "metal-l2.labels" $root | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: {{ $name }}-leader-election
subjects:
  - kind: ServiceAccount
    name: {{ $name }}
    namespace: {{ $root.Release.Namespace }}
{{- end -}}
