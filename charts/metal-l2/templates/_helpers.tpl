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
{{- end -}}

{{- define "metal-l2.ipam.selector" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: ipam-controller
{{- end -}}

{{- define "metal-l2.ipam.name" -}}{{ include "metal-l2.fullname" . }}-ipam{{- end -}}
{{- define "metal-l2.webhook.secret" -}}{{ include "metal-l2.fullname" . }}-webhook-cert{{- end -}}
{{- define "metal-l2.image" -}}{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}{{- end -}}

{{/*
The webhook's CA and serving certificate as Secret data. Generated once and kept: on upgrade the
existing Secret is reused, so the CA in the webhook configuration keeps matching. Memoised in
.Values so every template of one render sees the same certificate.
*/}}
{{- define "metal-l2.webhook.certs" -}}
{{- if not (hasKey .Values "_webhookCerts") -}}
{{- $secretName := include "metal-l2.webhook.secret" . -}}
{{- $existing := lookup "v1" "Secret" .Release.Namespace $secretName -}}
{{- if and $existing (index $existing.data "ca.crt") -}}
{{- $_ := set .Values "_webhookCerts" (dict "tls.crt" (index $existing.data "tls.crt") "tls.key" (index $existing.data "tls.key") "ca.crt" (index $existing.data "ca.crt")) -}}
{{- else -}}
{{- $svc := printf "%s-webhook" (include "metal-l2.ipam.name" .) -}}
{{- $ca := genCA "metal-l2-webhook-ca" 3650 -}}
{{- $cert := genSignedCert $svc nil (list (printf "%s.%s.svc" $svc .Release.Namespace) (printf "%s.%s.svc.cluster.local" $svc .Release.Namespace)) 3650 $ca -}}
{{- $_ := set .Values "_webhookCerts" (dict "tls.crt" ($cert.Cert | b64enc) "tls.key" ($cert.Key | b64enc) "ca.crt" ($ca.Cert | b64enc)) -}}
{{- end -}}
{{- end -}}
{{- toYaml .Values._webhookCerts -}}
{{- end -}}
