"""The protobuf messages of the workload kinds: v1 Pod and Service, apps/v1 Deployment and ReplicaSet.

`kubectl create deployment` and `kubectl create service clusterip|nodeport|loadbalancer|
externalname` send these in protobuf; so may any Go client set to protobuf. `protobuf.py`
registers them and decodes them strictly: a field number not listed here is refused (415) rather
than dropped, since a dropped field of a pod spec would lose what the user asked for.

Field numbers are those of k8s.io/api core/v1/generated.proto and apps/v1/generated.proto, and
of apimachinery pkg/apis/meta/v1/generated.proto (LabelSelector, Condition). JSON names are the
Go `json` tags; the types are those of `protobuf.py` ("flag" a Go bool, "bool"/"optint"/"optstr"
Go pointers, kept when sent). Covered: every field kubectl's generators and `kubectl run` write,
and most of the pod spec besides; not (refused if sent): ephemeral containers, pod resource
claims and pod-level resources, container restart rules, the volume sources other than those in
VOLUME_SOURCE, container statuses.
"""

from __future__ import annotations

from typing import Any

_Fields = dict[int, tuple[str, Any]]

# meta/v1
LABEL_SELECTOR_REQUIREMENT: _Fields = {1: ("key", "str"), 2: ("operator", "str"), 3: ("values", ("list", "str"))}
LABEL_SELECTOR: _Fields = {1: ("matchLabels", "map"), 2: ("matchExpressions", ("list", LABEL_SELECTOR_REQUIREMENT))}
CONDITION: _Fields = {1: ("type", "str"), 2: ("status", "str"), 3: ("observedGeneration", "int"),
                      4: ("lastTransitionTime", "time"), 5: ("reason", "str"), 6: ("message", "str")}

# core/v1: containers
LOCAL_OBJECT_REFERENCE: _Fields = {1: ("name", "str")}
OBJECT_FIELD_SELECTOR: _Fields = {1: ("apiVersion", "str"), 2: ("fieldPath", "str")}
RESOURCE_FIELD_SELECTOR: _Fields = {1: ("containerName", "str"), 2: ("resource", "str"), 3: ("divisor", "quantity")}
KEY_SELECTOR: _Fields = {1: ("", ("inline", LOCAL_OBJECT_REFERENCE)), 2: ("key", "str"), 3: ("optional", "bool")}  # ConfigMap/SecretKeySelector
ENV_VAR_SOURCE: _Fields = {1: ("fieldRef", OBJECT_FIELD_SELECTOR), 2: ("resourceFieldRef", RESOURCE_FIELD_SELECTOR),
                           3: ("configMapKeyRef", KEY_SELECTOR), 4: ("secretKeyRef", KEY_SELECTOR)}
ENV_VAR: _Fields = {1: ("name", "str"), 2: ("value", "str"), 3: ("valueFrom", ENV_VAR_SOURCE)}
ENV_SOURCE: _Fields = {1: ("", ("inline", LOCAL_OBJECT_REFERENCE)), 2: ("optional", "bool")}  # ConfigMap/SecretEnvSource
ENV_FROM_SOURCE: _Fields = {1: ("prefix", "str"), 2: ("configMapRef", ENV_SOURCE), 3: ("secretRef", ENV_SOURCE)}
CONTAINER_PORT: _Fields = {1: ("name", "str"), 2: ("hostPort", "int"), 3: ("containerPort", "int"), 4: ("protocol", "str"),
                           5: ("hostIP", "str")}
RESOURCE_REQUIREMENTS: _Fields = {1: ("limits", "quantitymap"), 2: ("requests", "quantitymap"),
                                  3: ("claims", ("list", {1: ("name", "str"), 2: ("request", "str")}))}
VOLUME_MOUNT: _Fields = {1: ("name", "str"), 2: ("readOnly", "flag"), 7: ("recursiveReadOnly", "optstr"), 3: ("mountPath", "str"),
                         4: ("subPath", "str"), 5: ("mountPropagation", "optstr"), 6: ("subPathExpr", "str")}
EXEC_ACTION: _Fields = {1: ("command", ("list", "str"))}
HTTP_GET_ACTION: _Fields = {1: ("path", "str"), 2: ("port", "intorstr"), 3: ("host", "str"), 4: ("scheme", "str"),
                            5: ("httpHeaders", ("list", {1: ("name", "str"), 2: ("value", "str")}))}
TCP_SOCKET_ACTION: _Fields = {1: ("port", "intorstr"), 2: ("host", "str")}
PROBE_HANDLER: _Fields = {1: ("exec", EXEC_ACTION), 2: ("httpGet", HTTP_GET_ACTION), 3: ("tcpSocket", TCP_SOCKET_ACTION),
                          4: ("grpc", {1: ("port", "int"), 2: ("service", "optstr")})}
PROBE: _Fields = {1: ("", ("inline", PROBE_HANDLER)), 2: ("initialDelaySeconds", "int"), 3: ("timeoutSeconds", "int"),
                  4: ("periodSeconds", "int"), 5: ("successThreshold", "int"), 6: ("failureThreshold", "int"),
                  7: ("terminationGracePeriodSeconds", "optint")}
LIFECYCLE_HANDLER: _Fields = {1: ("exec", EXEC_ACTION), 2: ("httpGet", HTTP_GET_ACTION), 3: ("tcpSocket", TCP_SOCKET_ACTION),
                              4: ("sleep", {1: ("seconds", "int")})}
LIFECYCLE: _Fields = {1: ("postStart", LIFECYCLE_HANDLER), 2: ("preStop", LIFECYCLE_HANDLER), 3: ("stopSignal", "optstr")}
SE_LINUX_OPTIONS: _Fields = {1: ("user", "str"), 2: ("role", "str"), 3: ("type", "str"), 4: ("level", "str")}
WINDOWS_OPTIONS: _Fields = {1: ("gmsaCredentialSpecName", "optstr"), 2: ("gmsaCredentialSpec", "optstr"),
                            3: ("runAsUserName", "optstr"), 4: ("hostProcess", "bool")}
PROFILE: _Fields = {1: ("type", "str"), 2: ("localhostProfile", "optstr")}  # SeccompProfile, AppArmorProfile
SECURITY_CONTEXT: _Fields = {
    1: ("capabilities", {1: ("add", ("list", "str")), 2: ("drop", ("list", "str"))}), 2: ("privileged", "bool"),
    3: ("seLinuxOptions", SE_LINUX_OPTIONS), 10: ("windowsOptions", WINDOWS_OPTIONS), 4: ("runAsUser", "optint"),
    8: ("runAsGroup", "optint"), 5: ("runAsNonRoot", "bool"), 6: ("readOnlyRootFilesystem", "bool"),
    7: ("allowPrivilegeEscalation", "bool"), 9: ("procMount", "optstr"), 11: ("seccompProfile", PROFILE),
    12: ("appArmorProfile", PROFILE),
}
CONTAINER: _Fields = {
    1: ("name", "str"), 2: ("image", "str"), 3: ("command", ("list", "str")), 4: ("args", ("list", "str")),
    5: ("workingDir", "str"), 6: ("ports", ("list", CONTAINER_PORT)), 19: ("envFrom", ("list", ENV_FROM_SOURCE)),
    7: ("env", ("list", ENV_VAR)), 8: ("resources", RESOURCE_REQUIREMENTS),
    23: ("resizePolicy", ("list", {1: ("resourceName", "str"), 2: ("restartPolicy", "str")})),
    24: ("restartPolicy", "optstr"), 9: ("volumeMounts", ("list", VOLUME_MOUNT)),
    21: ("volumeDevices", ("list", {1: ("name", "str"), 2: ("devicePath", "str")})),
    10: ("livenessProbe", PROBE), 11: ("readinessProbe", PROBE), 22: ("startupProbe", PROBE), 12: ("lifecycle", LIFECYCLE),
    13: ("terminationMessagePath", "str"), 20: ("terminationMessagePolicy", "str"), 14: ("imagePullPolicy", "str"),
    15: ("securityContext", SECURITY_CONTEXT), 16: ("stdin", "flag"), 17: ("stdinOnce", "flag"), 18: ("tty", "flag"),
}

# core/v1: volumes
KEY_TO_PATH: _Fields = {1: ("key", "str"), 2: ("path", "str"), 3: ("mode", "optint")}
DOWNWARD_API_VOLUME_FILE: _Fields = {1: ("path", "str"), 2: ("fieldRef", OBJECT_FIELD_SELECTOR),
                                     3: ("resourceFieldRef", RESOURCE_FIELD_SELECTOR), 4: ("mode", "optint")}
CONFIG_MAP_VOLUME_SOURCE: _Fields = {1: ("", ("inline", LOCAL_OBJECT_REFERENCE)), 2: ("items", ("list", KEY_TO_PATH)),
                                     3: ("defaultMode", "optint"), 4: ("optional", "bool")}
SECRET_VOLUME_SOURCE: _Fields = {1: ("secretName", "str"), 2: ("items", ("list", KEY_TO_PATH)), 3: ("defaultMode", "optint"),
                                 4: ("optional", "bool")}
PROJECTION: _Fields = {1: ("", ("inline", LOCAL_OBJECT_REFERENCE)), 2: ("items", ("list", KEY_TO_PATH)),
                       4: ("optional", "bool")}  # ConfigMapProjection, SecretProjection
VOLUME_PROJECTION: _Fields = {
    1: ("secret", PROJECTION), 2: ("downwardAPI", {1: ("items", ("list", DOWNWARD_API_VOLUME_FILE))}), 3: ("configMap", PROJECTION),
    4: ("serviceAccountToken", {1: ("audience", "str"), 2: ("expirationSeconds", "optint"), 3: ("path", "str")}),
}
VOLUME_SOURCE: _Fields = {
    1: ("hostPath", {1: ("path", "str"), 2: ("type", "optstr")}),
    2: ("emptyDir", {1: ("medium", "str"), 2: ("sizeLimit", "quantity")}),
    6: ("secret", SECRET_VOLUME_SOURCE),
    7: ("nfs", {1: ("server", "str"), 2: ("path", "str"), 3: ("readOnly", "flag")}),
    10: ("persistentVolumeClaim", {1: ("claimName", "str"), 2: ("readOnly", "flag")}),
    16: ("downwardAPI", {1: ("items", ("list", DOWNWARD_API_VOLUME_FILE)), 2: ("defaultMode", "optint")}),
    19: ("configMap", CONFIG_MAP_VOLUME_SOURCE),
    26: ("projected", {1: ("sources", ("list", VOLUME_PROJECTION)), 2: ("defaultMode", "optint")}),
    28: ("csi", {1: ("driver", "str"), 2: ("readOnly", "bool"), 3: ("fsType", "optstr"), 4: ("volumeAttributes", "map"),
                 5: ("nodePublishSecretRef", LOCAL_OBJECT_REFERENCE)}),
    30: ("image", {1: ("reference", "str"), 2: ("pullPolicy", "str")}),
}
VOLUME: _Fields = {1: ("name", "str"), 2: ("", ("inline", VOLUME_SOURCE))}

# core/v1: scheduling
NODE_SELECTOR_TERM: _Fields = {1: ("matchExpressions", ("list", LABEL_SELECTOR_REQUIREMENT)),
                               2: ("matchFields", ("list", LABEL_SELECTOR_REQUIREMENT))}  # NodeSelectorRequirement: same fields
POD_AFFINITY_TERM: _Fields = {1: ("labelSelector", LABEL_SELECTOR), 2: ("namespaces", ("list", "str")), 3: ("topologyKey", "str"),
                              4: ("namespaceSelector", LABEL_SELECTOR), 5: ("matchLabelKeys", ("list", "str")),
                              6: ("mismatchLabelKeys", ("list", "str"))}
POD_AFFINITY: _Fields = {  # PodAffinity, PodAntiAffinity
    1: ("requiredDuringSchedulingIgnoredDuringExecution", ("list", POD_AFFINITY_TERM)),
    2: ("preferredDuringSchedulingIgnoredDuringExecution", ("list", {1: ("weight", "int"), 2: ("podAffinityTerm", POD_AFFINITY_TERM)})),
}
AFFINITY: _Fields = {
    1: ("nodeAffinity", {
        1: ("requiredDuringSchedulingIgnoredDuringExecution", {1: ("nodeSelectorTerms", ("list", NODE_SELECTOR_TERM))}),
        2: ("preferredDuringSchedulingIgnoredDuringExecution", ("list", {1: ("weight", "int"), 2: ("preference", NODE_SELECTOR_TERM)})),
    }),
    2: ("podAffinity", POD_AFFINITY), 3: ("podAntiAffinity", POD_AFFINITY),
}
TOLERATION: _Fields = {1: ("key", "str"), 2: ("operator", "str"), 3: ("value", "str"), 4: ("effect", "str"),
                       5: ("tolerationSeconds", "optint")}
TOPOLOGY_SPREAD_CONSTRAINT: _Fields = {
    1: ("maxSkew", "int"), 2: ("topologyKey", "str"), 3: ("whenUnsatisfiable", "str"), 4: ("labelSelector", LABEL_SELECTOR),
    5: ("minDomains", "optint"), 6: ("nodeAffinityPolicy", "optstr"), 7: ("nodeTaintsPolicy", "optstr"),
    8: ("matchLabelKeys", ("list", "str")),
}

# core/v1: pods
POD_SECURITY_CONTEXT: _Fields = {
    1: ("seLinuxOptions", SE_LINUX_OPTIONS), 8: ("windowsOptions", WINDOWS_OPTIONS), 2: ("runAsUser", "optint"),
    6: ("runAsGroup", "optint"), 3: ("runAsNonRoot", "bool"), 4: ("supplementalGroups", ("list", "int")),
    12: ("supplementalGroupsPolicy", "optstr"), 5: ("fsGroup", "optint"),
    7: ("sysctls", ("list", {1: ("name", "str"), 2: ("value", "str")})), 9: ("fsGroupChangePolicy", "optstr"),
    10: ("seccompProfile", PROFILE), 11: ("appArmorProfile", PROFILE), 13: ("seLinuxChangePolicy", "optstr"),
}
POD_DNS_CONFIG: _Fields = {1: ("nameservers", ("list", "str")), 2: ("searches", ("list", "str")),
                           3: ("options", ("list", {1: ("name", "str"), 2: ("value", "optstr")}))}
POD_SPEC: _Fields = {
    1: ("volumes", ("list", VOLUME)), 20: ("initContainers", ("list", CONTAINER)), 2: ("containers", ("list", CONTAINER)),
    3: ("restartPolicy", "str"), 4: ("terminationGracePeriodSeconds", "optint"), 5: ("activeDeadlineSeconds", "optint"),
    6: ("dnsPolicy", "str"), 7: ("nodeSelector", "map"), 8: ("serviceAccountName", "str"), 9: ("serviceAccount", "str"),
    21: ("automountServiceAccountToken", "bool"), 10: ("nodeName", "str"), 11: ("hostNetwork", "flag"),
    12: ("hostPID", "flag"), 13: ("hostIPC", "flag"), 27: ("shareProcessNamespace", "bool"),
    14: ("securityContext", POD_SECURITY_CONTEXT), 15: ("imagePullSecrets", ("list", LOCAL_OBJECT_REFERENCE)),
    16: ("hostname", "str"), 17: ("subdomain", "str"), 18: ("affinity", AFFINITY), 19: ("schedulerName", "str"),
    22: ("tolerations", ("list", TOLERATION)), 23: ("hostAliases", ("list", {1: ("ip", "str"), 2: ("hostnames", ("list", "str"))})),
    24: ("priorityClassName", "str"), 25: ("priority", "optint"), 26: ("dnsConfig", POD_DNS_CONFIG),
    28: ("readinessGates", ("list", {1: ("conditionType", "str")})), 29: ("runtimeClassName", "optstr"),
    30: ("enableServiceLinks", "bool"), 31: ("preemptionPolicy", "optstr"), 32: ("overhead", "quantitymap"),
    33: ("topologySpreadConstraints", ("list", TOPOLOGY_SPREAD_CONSTRAINT)), 35: ("setHostnameAsFQDN", "bool"),
    36: ("os", {1: ("name", "str")}), 37: ("hostUsers", "bool"), 38: ("schedulingGates", ("list", {1: ("name", "str")})),
}
POD_CONDITION: _Fields = {1: ("type", "str"), 7: ("observedGeneration", "int"), 2: ("status", "str"), 3: ("lastProbeTime", "time"),
                          4: ("lastTransitionTime", "time"), 5: ("reason", "str"), 6: ("message", "str")}
POD_STATUS: _Fields = {  # what a client may send on create; container statuses are left to the kubelet
    17: ("observedGeneration", "int"), 1: ("phase", "str"), 2: ("conditions", ("list", POD_CONDITION)), 3: ("message", "str"),
    4: ("reason", "str"), 11: ("nominatedNodeName", "str"), 5: ("hostIP", "str"), 16: ("hostIPs", ("list", {1: ("ip", "str")})),
    6: ("podIP", "str"), 12: ("podIPs", ("list", {1: ("ip", "str")})), 7: ("startTime", "time"), 9: ("qosClass", "str"),
    14: ("resize", "str"),
}
POD_TEMPLATE_SPEC: _Fields = {1: ("metadata", "objectmeta"), 2: ("spec", POD_SPEC)}

# core/v1: services
SERVICE_PORT: _Fields = {1: ("name", "str"), 2: ("protocol", "str"), 6: ("appProtocol", "optstr"), 3: ("port", "int"),
                         4: ("targetPort", "intorstr"), 5: ("nodePort", "int")}
SERVICE_SPEC: _Fields = {
    1: ("ports", ("list", SERVICE_PORT)), 2: ("selector", "map"), 3: ("clusterIP", "str"), 18: ("clusterIPs", ("list", "str")),
    4: ("type", "str"), 5: ("externalIPs", ("list", "str")), 7: ("sessionAffinity", "str"), 8: ("loadBalancerIP", "str"),
    9: ("loadBalancerSourceRanges", ("list", "str")), 10: ("externalName", "str"), 11: ("externalTrafficPolicy", "str"),
    12: ("healthCheckNodePort", "int"), 13: ("publishNotReadyAddresses", "flag"),
    14: ("sessionAffinityConfig", {1: ("clientIP", {1: ("timeoutSeconds", "optint")})}), 19: ("ipFamilies", ("list", "str")),
    17: ("ipFamilyPolicy", "optstr"), 20: ("allocateLoadBalancerNodePorts", "bool"), 21: ("loadBalancerClass", "optstr"),
    22: ("internalTrafficPolicy", "optstr"), 23: ("trafficDistribution", "optstr"),
}
LOAD_BALANCER_INGRESS: _Fields = {1: ("ip", "str"), 2: ("hostname", "str"), 3: ("ipMode", "optstr"),
                                  4: ("ports", ("list", {1: ("port", "int"), 2: ("protocol", "str"), 3: ("error", "optstr")}))}
SERVICE_STATUS: _Fields = {1: ("loadBalancer", {1: ("ingress", ("list", LOAD_BALANCER_INGRESS))}),
                           2: ("conditions", ("list", CONDITION))}

# apps/v1
DEPLOYMENT_SPEC: _Fields = {
    1: ("replicas", "optint"), 2: ("selector", LABEL_SELECTOR), 3: ("template", POD_TEMPLATE_SPEC),
    4: ("strategy", {1: ("type", "str"), 2: ("rollingUpdate", {1: ("maxUnavailable", "optintorstr"), 2: ("maxSurge", "optintorstr")})}),
    5: ("minReadySeconds", "int"), 6: ("revisionHistoryLimit", "optint"), 7: ("paused", "flag"),
    9: ("progressDeadlineSeconds", "optint"),
}
DEPLOYMENT_STATUS: _Fields = {
    1: ("observedGeneration", "int"), 2: ("replicas", "int"), 3: ("updatedReplicas", "int"), 7: ("readyReplicas", "int"),
    4: ("availableReplicas", "int"), 5: ("unavailableReplicas", "int"), 9: ("terminatingReplicas", "optint"),
    6: ("conditions", ("list", {1: ("type", "str"), 2: ("status", "str"), 6: ("lastUpdateTime", "time"),
                                7: ("lastTransitionTime", "time"), 4: ("reason", "str"), 5: ("message", "str")})),
    8: ("collisionCount", "optint"),
}
REPLICA_SET_SPEC: _Fields = {1: ("replicas", "optint"), 4: ("minReadySeconds", "int"), 2: ("selector", LABEL_SELECTOR),
                             3: ("template", POD_TEMPLATE_SPEC)}
REPLICA_SET_STATUS: _Fields = {
    1: ("replicas", "int"), 2: ("fullyLabeledReplicas", "int"), 4: ("readyReplicas", "int"), 5: ("availableReplicas", "int"),
    7: ("terminatingReplicas", "optint"), 3: ("observedGeneration", "int"),
    6: ("conditions", ("list", {1: ("type", "str"), 2: ("status", "str"), 3: ("lastTransitionTime", "time"),
                                4: ("reason", "str"), 5: ("message", "str")})),
}

KINDS: dict[tuple[str, str], _Fields] = {
    ("v1", "Pod"): {1: ("metadata", "objectmeta"), 2: ("spec", POD_SPEC), 3: ("status", POD_STATUS)},
    ("v1", "Service"): {1: ("metadata", "objectmeta"), 2: ("spec", SERVICE_SPEC), 3: ("status", SERVICE_STATUS)},
    ("apps/v1", "Deployment"): {1: ("metadata", "objectmeta"), 2: ("spec", DEPLOYMENT_SPEC), 3: ("status", DEPLOYMENT_STATUS)},
    ("apps/v1", "ReplicaSet"): {1: ("metadata", "objectmeta"), 2: ("spec", REPLICA_SET_SPEC), 3: ("status", REPLICA_SET_STATUS)},
}
