{{- define "metal-l2.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}{{ .Release.Name | trunc 63 | trimSuffix "-" }}{{- else -}}{{ printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" }}{{- end -}}
{{- end -}}

{{- define "metal-l2.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
cluster.x-k8s.io/provider: ipam-metal-l2
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* Selector of one controller's pods; call with (dict "root" $ "component" "ipam-controller"). */}}
{{- define "metal-l2.selector" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "metal-l2.ipam.selector" -}}{{ include "metal-l2.selector" (dict "root" . "component" "ipam-controller") }}{{- end -}}
{{- define "metal-l2.network.selector" -}}{{ include "metal-l2.selector" (dict "root" . "component" "network-controller") }}{{- end -}}

{{- define "metal-l2.ipam.name" -}}{{ include "metal-l2.fullname" . }}-ipam{{- end -}}
{{- define "metal-l2.network.name" -}}{{ include "metal-l2.fullname" . }}-network{{- end -}}
{{- define "metal-l2.webhook.secret" -}}{{ include "metal-l2.fullname" . }}-webhook-cert{{- end -}}
{{- define "metal-l2.image" -}}{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}{{- end -}}

{{/* The webhook Services whose names the serving certificate carries, one per enabled controller. */}}
{{- define "metal-l2.webhook.dnsNames" -}}
{{- $names := list -}}
{{- range $component := list "ipam" "network" -}}
{{- if (index $.Values $component).enabled -}}
{{- $svc := printf "%s-%s-webhook" (include "metal-l2.fullname" $) $component -}}
{{- $names = append $names (printf "%s.%s.svc" $svc $.Release.Namespace) -}}
{{- $names = append $names (printf "%s.%s.svc.cluster.local" $svc $.Release.Namespace) -}}
{{- end -}}
{{- end -}}
{{- toYaml $names -}}
{{- end -}}

{{/*
The webhooks' CA and serving certificate as Secret data (one certificate for both controllers'
webhook Services). Generated once and kept: on upgrade the existing Secret is reused while it was
made for the same Service names, so the CA in the webhook configurations keeps matching.
Memoised in .Values so every template of one render sees the same certificate.
*/}}
{{- define "metal-l2.webhook.certs" -}}
{{- if not (hasKey .Values "_webhookCerts") -}}
{{- $secretName := include "metal-l2.webhook.secret" . -}}
{{- $dnsNames := fromYamlArray (include "metal-l2.webhook.dnsNames" .) -}}
{{- $existing := lookup "v1" "Secret" .Release.Namespace $secretName -}}
{{- $existingNames := "" -}}
{{- if $existing -}}{{- $existingNames = index ($existing.metadata.annotations | default dict) "metal-l2.x-k8s.io/dns-names" | default "" -}}{{- end -}}
{{- if and $existing (index $existing.data "ca.crt") (eq $existingNames (join "," $dnsNames)) -}}
{{- $_ := set .Values "_webhookCerts" (dict "tls.crt" (index $existing.data "tls.crt") "tls.key" (index $existing.data "tls.key") "ca.crt" (index $existing.data "ca.crt")) -}}
{{- else -}}
{{- $ca := genCA "metal-l2-webhook-ca" 3650 -}}
{{- $cert := genSignedCert (first $dnsNames) nil $dnsNames 3650 $ca -}}
{{- $_ := set .Values "_webhookCerts" (dict "tls.crt" ($cert.Cert | b64enc) "tls.key" ($cert.Key | b64enc) "ca.crt" ($ca.Cert | b64enc)) -}}
{{- end -}}
{{- end -}}
{{- toYaml .Values._webhookCerts -}}
{{- end -}}

{{/* The caBundle line of a webhook's clientConfig (Helm-generated certificates only). */}}
{{- define "metal-l2.webhook.caBundle" -}}
{{- if eq .Values.webhook.certificates "helm" }}
caBundle: {{ index (fromYaml (include "metal-l2.webhook.certs" .)) "ca.crt" }}
{{- end }}
{{- end -}}

{{/* The cert-manager annotation that injects the CA into a webhook configuration. */}}
{{- define "metal-l2.webhook.annotations" -}}
{{- if eq .Values.webhook.certificates "cert-manager" }}
annotations:
  cert-manager.io/inject-ca-from: {{ .Release.Namespace }}/{{ include "metal-l2.webhook.secret" . }}
{{- end }}
{{- end -}}

{{/* Is any webhook served? (a controller enabled and webhooks on) */}}
{{- define "metal-l2.webhook.any" -}}
{{- if and .Values.webhook.enabled (or .Values.ipam.enabled .Values.network.enabled) }}true{{ end -}}
{{- end -}}

{{/*
The network webhooks' namespaceSelector: the user's (network.webhook.namespaceSelector), narrowed
to network.watchNamespace when the controller watches one namespace, so the webhook never holds a
machine the controller would never release.
*/}}
{{- define "metal-l2.network.namespaceSelector" -}}
{{- include "metal-l2.network.namespaceSelectorWith" (dict "root" . "also" list) -}}
{{- end -}}

{{/*
The same, narrowed further by the matchExpressions in "also" (the PacketMachine webhooks split
namespaces by the clone opt-in label). Takes (dict "root" $ "also" (list <expression>...)).
*/}}
{{- define "metal-l2.network.namespaceSelectorWith" -}}
{{- $root := .root -}}
{{- $selector := deepCopy ($root.Values.network.webhook.namespaceSelector | default dict) -}}
{{- $expressions := concat ($selector.matchExpressions | default list) .also -}}
{{- with $root.Values.network.watchNamespace -}}
{{- $expressions = append $expressions (dict "key" "kubernetes.io/metadata.name" "operator" "In" "values" (list .)) -}}
{{- end -}}
{{- if $expressions -}}
{{- $_ := set $selector "matchExpressions" $expressions -}}
{{- end -}}
{{- with $selector }}
namespaceSelector: {{- toYaml . | nindent 2 }}
{{- end -}}
{{- end -}}

{{/* The namespace label that opts a namespace's cloned PacketMachines into the fail-closed webhook. */}}
{{- define "metal-l2.network.clonesLabel" -}}network.metal.x-k8s.io/enabled{{- end -}}
