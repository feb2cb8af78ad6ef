{{/*
The operator's permissions, in one place. templates/rbac.yaml turns them into a ClusterRole
(cluster-wide mode) or a Role per watched namespace plus a small ClusterRole (namespaced mode).
Exact verbs, no wildcards; docs/install.md lists the same table, and a test checks that it does.

- namespaced: what the operator does in every namespace it watches.
- clusterWide: added only when it watches every namespace.
- cluster: cluster-scoped resources it reads in both modes.
- peering / clusterPeering: Kopf's peering objects, only when HA is on (namespaced mode uses
  KopfPeering objects in each watched namespace, cluster-wide mode a ClusterKopfPeering).
*/}}
{{- define "pinery.permissions" -}}
namespaced:
  - apiGroups: ["pinery.dev"]
    resources: ["vectorindexes"]
    verbs: ["get", "list", "watch", "patch", "update"]
  # delete: a finished FSDPJob is removed once its ttlSecondsAfterFinished has passed.
  - apiGroups: ["pinery.dev"]
    resources: ["fsdpjobs"]
    verbs: ["get", "list", "watch", "patch", "update", "delete"]
  # create and delete: a VectorIndexBackupSchedule makes its backups and deletes those that
  # fall out of retention.
  - apiGroups: ["pinery.dev"]
    resources: ["vectorindexbackups"]
    verbs: ["get", "list", "watch", "patch", "update", "create", "delete"]
  - apiGroups: ["pinery.dev"]
    resources: ["vectorindexbackupschedules"]
    verbs: ["get", "list", "watch", "patch", "update"]
  - apiGroups: ["pinery.dev"]
    resources: ["vectorindexes/status", "fsdpjobs/status", "vectorindexbackups/status", "vectorindexbackupschedules/status"]
    verbs: ["get", "patch", "update"]
  - apiGroups: ["pinery.dev"]
    resources: ["vectorindexes/finalizers", "fsdpjobs/finalizers", "vectorindexbackups/finalizers", "vectorindexbackupschedules/finalizers"]
    verbs: ["update"]
  - apiGroups: [""]
    resources: ["pods"]
    verbs: ["get", "list", "watch", "create", "delete"]
  # An FSDPJob's gang (spec.gang): list, each pass reads the job's PodGroups (no watch: they are
  # read, not followed); get, a create that meets AlreadyExists reads the group; delete, an old
  # attempt's group or a suspended job's. Rules for an API group a cluster does not serve grant nothing.
  - apiGroups: ["scheduling.x-k8s.io"]
    resources: ["podgroups"]
    verbs: ["get", "list", "create", "delete"]
  - apiGroups: ["scheduling.volcano.sh"]
    resources: ["podgroups"]
    verbs: ["get", "list", "create", "delete"]
  - apiGroups: [""]
    resources: ["pods/log"]
    verbs: ["get"]
  - apiGroups: [""]
    resources: ["services"]
    verbs: ["get", "list", "watch", "create", "delete"]
  - apiGroups: [""]
    resources: ["configmaps"]
    verbs: ["get", "list", "watch", "create", "update", "patch", "delete"]
  - apiGroups: [""]
    resources: ["secrets"]
    verbs: ["get"]
  - apiGroups: [""]
    resources: ["persistentvolumeclaims"]
    verbs: ["get", "list", "watch"]
  - apiGroups: [""]
    resources: ["events"]
    verbs: ["create", "patch"]
  - apiGroups: ["events.k8s.io"]
    resources: ["events"]
    verbs: ["create", "patch"]
  # Kueue (an FSDPJob labelled kueue.x-k8s.io/queue-name): the job's Workload is read and
  # created; patch sets spec.active and removes Kueue's finalizer; list and watch are Kopf's
  # watch that wakes the job when Kueue admits or evicts it. No delete: the ownerReference
  # collects it. Without Kueue's CRDs these grant nothing.
  - apiGroups: ["kueue.x-k8s.io"]
    resources: ["workloads"]
    verbs: ["get", "list", "watch", "create", "patch"]
  - apiGroups: ["kueue.x-k8s.io"]
    resources: ["workloads/status"]
    verbs: ["patch"]
clusterWide:
  - apiGroups: [""]
    resources: ["namespaces"]
    verbs: ["get", "list", "watch"]
cluster:
  - apiGroups: ["apiextensions.k8s.io"]
    resources: ["customresourcedefinitions"]
    verbs: ["get", "list", "watch"]
  # Kueue: the ResourceFlavors an admission assigns (node labels, tolerations) and the
  # priority class of a job's Workload, read by name.
  - apiGroups: ["kueue.x-k8s.io"]
    resources: ["resourceflavors", "workloadpriorityclasses"]
    verbs: ["get"]
  - apiGroups: ["scheduling.k8s.io"]
    resources: ["priorityclasses"]
    verbs: ["get"]
  # Failed-node avoidance: a job that avoids nodes counts the Ready, schedulable ones left, to
  # choose required or preferred node affinity (without it the avoidance is preferred).
  - apiGroups: [""]
    resources: ["nodes"]
    verbs: ["list"]
peering:
  - apiGroups: ["kopf.dev"]
    resources: ["kopfpeerings"]
    verbs: ["get", "list", "watch", "patch"]
clusterPeering:
  - apiGroups: ["kopf.dev"]
    resources: ["clusterkopfpeerings"]
    verbs: ["get", "list", "watch", "patch"]
{{- end -}}

{{/* Namespaces holding the default API key Secret that the operator does not watch. */}}
{{- define "pinery.extraSecretNamespaces" -}}
{{- $secretNs := include "pinery.secretNamespace" . -}}
{{- if and .Values.watchNamespaces (not (has $secretNs .Values.watchNamespaces)) -}}
{{- $secretNs -}}
{{- end -}}
{{- end -}}
