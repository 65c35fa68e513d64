{{/*
One controller's Deployment, metrics Service and PodDisruptionBudget. Call with
(dict "root" $ "key" "ipam" "component" "ipam-controller" "main" "ipam-controller" "args" (list ...)):
`key` names the values subtree, `main` the package whose dist/main.js the image runs.
*/}}
{{- define "metal-l2.controller" -}}
{{- $root := .root -}}
{{- $v := index $root.Values .key -}}
{{- $name := printf "%s-%s" (include "metal-l2.fullname" $root) .key -}}
{{- $selector := include "metal-l2.selector" (dict "root" $root "component" .component) -}}
{{- $webhook := $root.Values.webhook.enabled -}}
{{- /* The kubelet kills the pod terminationGracePeriodSeconds after SIGTERM: that must leave the
controller its graceful shutdown (running reconciles end) and then the Lease hand-over and the
servers' close. Computed when not set; refused when set too short. */ -}}
{{- /* default: values of a release installed before the key existed (helm upgrade --reuse-values) */ -}}
{{- $shutdown := int ($v.gracefulShutdownTimeoutSeconds | default 30) -}}
{{- $grace := add $shutdown 15 -}}
{{- if hasKey $v "terminationGracePeriodSeconds" -}}
{{- $grace = int $v.terminationGracePeriodSeconds -}}
{{- if lt $grace (add $shutdown 5) -}}
{{- fail (printf "%s.terminationGracePeriodSeconds (%d) must be at least %s.gracefulShutdownTimeoutSeconds + 5 (%d): the kubelet would kill the controller before its graceful shutdown ends and it hands its Lease over" .key $grace .key (add $shutdown 5)) -}}
{{- end -}}
{{- end -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ $name }}
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "metal-l2.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ .component }}
spec:
  replicas: {{ $v.replicas }}
  selector:
    matchLabels: {{- $selector | nindent 6 }}
  template:
    metadata:
      labels:
        {{- $selector | nindent 8 }}
        {{- with $v.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      annotations:
        {{- if and $webhook (eq $root.Values.webhook.certificates "helm") }}
        # Roll the pods when the generated certificate changes.
        checksum/webhook-cert: {{ include "metal-l2.webhook.certs" $root | sha256sum }}
        {{- end }}
        {{- with $v.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      serviceAccountName: {{ $name }}
      automountServiceAccountToken: true
      {{- with $root.Values.imagePullSecrets }}
      imagePullSecrets: {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $v.priorityClassName }}
      priorityClassName: {{ . }}
      {{- end }}
      securityContext: {{- toYaml $root.Values.podSecurityContext | nindent 8 }}
      terminationGracePeriodSeconds: {{ $grace }}
      containers:
        - name: manager
          image: {{ include "metal-l2.image" $root }}
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          command: {{- toYaml ($v.command | default (list "node" (printf "/app/packages/%s/dist/main.js" .main))) | nindent 12 }}
          args:
            - --leader-elect={{ $v.leaderElect }}
            - --leader-election-id={{ $name }}
            - --metrics-bind-address=:{{ $root.Values.metrics.port }}
            - --health-probe-bind-address=:{{ $root.Values.healthProbePort }}
            - --webhook-port={{ if $webhook }}{{ $root.Values.webhook.port }}{{ else }}0{{ end }}
            - --webhook-cert-dir=/tmp/k8s-webhook-server/serving-certs
            - --concurrency={{ $v.concurrency }}
            - --log-level={{ $v.logLevel }}
            - --log-format={{ $v.logFormat }}
            - --graceful-shutdown-timeout-seconds={{ $shutdown }}
            {{- with $v.watchNamespace }}
            - --namespace={{ . }}
            {{- end }}
            {{- range .args }}
            - {{ . | quote }}
            {{- end }}
            {{- range $k, $val := $v.extraArgs }}
            - --{{ $k }}={{ $val }}
            {{- end }}
          env:
            - name: POD_NAME
              valueFrom: {fieldRef: {fieldPath: metadata.name}}
            - name: POD_NAMESPACE
              valueFrom: {fieldRef: {fieldPath: metadata.namespace}}
            {{- with $v.heapLimitMi }}
            # A 2 MiB young generation: V8's default lets it grow to tens of MiB of resident memory
            # beside the caches (hack/bench.js: 3,000 claims at once, peak RSS 236 -> 134 MiB).
            - name: NODE_OPTIONS
              value: --max-old-space-size={{ . }} --max-semi-space-size=2
            {{- end }}
            {{- with $v.env }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
          ports:
            - {name: metrics, containerPort: {{ $root.Values.metrics.port }}, protocol: TCP}
            - {name: health, containerPort: {{ $root.Values.healthProbePort }}, protocol: TCP}
            {{- if $webhook }}
            - {name: webhook, containerPort: {{ $root.Values.webhook.port }}, protocol: TCP}
            {{- end }}
          livenessProbe:
            httpGet: {path: /healthz, port: health}
            initialDelaySeconds: 10
            periodSeconds: 10
          readinessProbe:
            httpGet: {path: /readyz, port: health}
            periodSeconds: 5
          resources: {{- toYaml $v.resources | nindent 12 }}
          securityContext: {{- toYaml $root.Values.securityContext | nindent 12 }}
          {{- if $webhook }}
          volumeMounts:
            - name: webhook-cert
              mountPath: /tmp/k8s-webhook-server/serving-certs
              readOnly: true
          {{- end }}
      {{- if $webhook }}
      volumes:
        - name: webhook-cert
          secret:
            secretName: {{ include "metal-l2.webhook.secret" $root }}
      {{- end }}
      {{- with $v.nodeSelector }}
      nodeSelector: {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $v.tolerations }}
      tolerations: {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- if $v.affinity }}
      affinity: {{- toYaml $v.affinity | nindent 8 }}
      {{- else if gt (int $v.replicas) 1 }}
      # Replicas on different nodes where possible: one node going down leaves a webhook serving.
      affinity:
        podAntiAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
            - weight: 100
              podAffinityTerm:
                topologyKey: kubernetes.io/hostname
                labelSelector:
                  matchLabels: {{- $selector | nindent 20 }}
      {{- end }}
      {{- with $v.topologySpreadConstraints }}
      topologySpreadConstraints: {{- toYaml . | nindent 8 }}
      {{- end }}
---
apiVersion: v1
kind: Service
metadata:
  name: {{ $name }}-metrics
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "metal-l2.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ .component }}
spec:
  selector: {{- $selector | nindent 4 }}
  ports:
    - {name: metrics, port: {{ $root.Values.metrics.port }}, targetPort: metrics, protocol: TCP}
{{- if $webhook }}
---
apiVersion: v1
kind: Service
metadata:
  name: {{ $name }}-webhook
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "metal-l2.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ .component }}
spec:
  selector: {{- $selector | nindent 4 }}
  ports:
    - {name: webhook, port: 443, targetPort: webhook, protocol: TCP}
{{- end }}
{{- if $v.podDisruptionBudget.enabled }}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ $name }}
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "metal-l2.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ .component }}
spec:
  selector:
    matchLabels: {{- $selector | nindent 6 }}
  {{- if hasKey $v.podDisruptionBudget "minAvailable" }}
  minAvailable: {{ $v.podDisruptionBudget.minAvailable }}
  {{- else if hasKey $v.podDisruptionBudget "maxUnavailable" }}
  maxUnavailable: {{ $v.podDisruptionBudget.maxUnavailable }}
  {{- else if gt (int $v.replicas) 1 }}
  # Every replica serves the webhooks: a drain leaves at least one of them running.
  minAvailable: 1
  {{- else }}
  # One replica: a budget that forbade its eviction would block node drains for good.
  maxUnavailable: 1
  {{- end }}
{{- end }}
{{- if and $root.Values.metrics.serviceMonitor.enabled }}
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: {{ $name }}
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "metal-l2.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ .component }}
    {{- with $root.Values.metrics.serviceMonitor.labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  selector:
    matchLabels:
      app.kubernetes.io/instance: {{ $root.Release.Name }}
      app.kubernetes.io/component: {{ .component }}
  endpoints:
    - port: metrics
      path: /metrics
      interval: {{ $root.Values.metrics.serviceMonitor.interval }}
      {{- with $root.Values.metrics.serviceMonitor.scrapeTimeout }}
      scrapeTimeout: {{ . }}
      {{- end }}
{{- end }}
{{- end -}}
