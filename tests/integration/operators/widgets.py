"""A small Kopf operator for the `Widget` test resource, run by KopfRunner against the local
control plane: create/update/delete handlers, a finalizer, a child ConfigMap adopted with
`kopf.adopt`, status patches and Kubernetes Events."""

import kopf
import kubernetes

GROUP, VERSION, PLURAL = "test.pinery.dev", "v1", "widgets"
FINALIZER = "test.pinery.dev/cleanup"


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_):
    settings.persistence.finalizer = FINALIZER
    settings.watching.server_timeout = 30
    settings.posting.level = 20  # INFO: kopf.info() becomes an Event


def _core_v1() -> kubernetes.client.CoreV1Api:
    kubernetes.config.load_kube_config()
    return kubernetes.client.CoreV1Api()


@kopf.on.create(GROUP, VERSION, PLURAL)
def create_fn(body, spec, name, namespace, patch, **_):
    child = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"{name}-child"}, "data": {"size": str(spec.get("size", 0))}}
    kopf.adopt(child)
    _core_v1().create_namespaced_config_map(namespace, child)
    kopf.info(body, reason="ChildCreated", message=f"created ConfigMap {name}-child")
    patch.status["phase"] = "Ready"
    patch.status["size"] = spec.get("size", 0)
    return {"child": f"{name}-child"}


@kopf.on.update(GROUP, VERSION, PLURAL, field="spec.size")
def resize_fn(new, name, namespace, patch, **_):
    _core_v1().patch_namespaced_config_map(f"{name}-child", namespace, {"data": {"size": str(new)}})
    patch.status["size"] = new


@kopf.on.delete(GROUP, VERSION, PLURAL)
def delete_fn(body, name, **_):
    kopf.info(body, reason="Deleting", message=f"widget {name} cleaned up")
