{{/* Names, labels and derived settings shared by the templates. */}}

{{- define "pinery.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "pinery.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "pinery.selectorLabels" -}}
app.kubernetes.io/name: {{ include "pinery.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "pinery.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "pinery.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/part-of: pinery
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "pinery.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "pinery.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* An image reference from {repository, tag, digest}; the tag defaults to appVersion. */}}
{{- define "pinery.imageRef" -}}
{{- $image := index . 0 -}}
{{- $root := index . 1 -}}
{{- if $image.digest -}}
{{- printf "%s@%s" $image.repository $image.digest -}}
{{- else -}}
{{- printf "%s:%s" $image.repository (default $root.Chart.AppVersion $image.tag) -}}
{{- end -}}
{{- end -}}

{{- define "pinery.operatorImage" -}}
{{- include "pinery.imageRef" (list .Values.image .) -}}
{{- end -}}

{{- define "pinery.trainerImage" -}}
{{- include "pinery.imageRef" (list .Values.trainerImage .) -}}
{{- end -}}

{{/* "true" when Kopf peering is on: several replicas, or asked for. */}}
{{- define "pinery.ha" -}}
{{- if or .Values.ha.enabled (gt (int .Values.replicas) 1) -}}true{{- end -}}
{{- end -}}

{{/* "true" when the operator watches every namespace. */}}
{{- define "pinery.clusterWide" -}}
{{- if not .Values.watchNamespaces -}}true{{- end -}}
{{- end -}}

{{- define "pinery.secretNamespace" -}}
{{- default .Release.Namespace .Values.pinecone.apiKeySecret.namespace -}}
{{- end -}}
