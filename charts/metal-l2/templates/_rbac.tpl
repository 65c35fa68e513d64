{{/*
A controller's ServiceAccount, its ClusterRole (rules given by the caller) bound cluster-wide,
the Role for its leader-election Lease in the release namespace, and its access to Secrets.
Call with (dict "root" $ "key" "ipam" "rules" "<yaml list>" "secretVerbs" (list ...)
"secretRoles" (dict "<namespace>" (list <verbs>) ...)).
Secrets are read one by name, never listed. A controller that watches every namespace gets
`secretVerbs` on Secrets cluster-wide; one limited to a namespace (watchNamespace) gets a Role in
each namespace of `secretRoles` instead, and no Secret outside them.
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
  {{- if not .secretRoles }}
  # Secrets in any namespace (the controller watches them all), each read by name.
  - apiGroups: [""]
    resources: [secrets]
    verbs: {{ toJson .secretVerbs }}
  {{- end }}
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
{{- range $ns, $verbs := .secretRoles }}
---
# Secrets in {{ $ns }} only: the controller is limited to a namespace.
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {{ $name }}-secrets
  namespace: {{ $ns }}
  labels: {{- include "metal-l2.labels" $root | nindent 4 }}
rules:
  - apiGroups: [""]
    resources: [secrets]
    verbs: {{ toJson $verbs }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ $name }}-secrets
  namespace: {{ $ns }}
  labels: {{- include "metal-l2.labels" $root | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: {{ $name }}-secrets
subjects:
  - kind: ServiceAccount
    name: {{ $name }}
    namespace: {{ $root.Release.Namespace }}
{{- end }}
{{- end -}}
