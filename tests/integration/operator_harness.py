"""The real operator (`pinery.runtime.build_registry`) under Kopf's KopfRunner, against a local
control plane and a Pinecone emulator, with every log record it writes kept for inspection.

    with running_operator(control_plane, emulator.url, api_key=TEST_API_KEY) as op:
        op.custom.create_namespaced_custom_object(...)
        ...
        assert op.crashes() == []
"""

from __future__ import annotations

import base64
import contextlib
import logging
from dataclasses import dataclass, field
from typing import Any, Iterator

import kopf.testing

from pinery.api import API_VERSION, resource_for_kind
from pinery.runtime import build_registry, kopf_settings
from pinery.services import Services
from pinery.settings import OperatorSettings
from pinery.vectorindex.schedule import Timing

OPERATOR_NAMESPACE = "pinery-system"
SECRET_NAME = "pinecone-api-key"


class RecordKeeper(logging.Handler):
    """Keeps every record (formatted once, so that arguments cannot change afterwards)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []
        self.lines: list[str] = []
        self.setFormatter(logging.Formatter("%(levelname)s %(name)s %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)
        self.lines.append(self.format(record))  # with the traceback, when there is one


@dataclass
class RunningOperator:
    plane: Any
    services: Services
    runner: kopf.testing.KopfRunner
    logs: RecordKeeper
    custom: Any = field(default=None)
    core: Any = field(default=None)

    def path(self, kind: str, name: str = "", namespace: str = "default") -> tuple:
        res = resource_for_kind(kind)
        return (res.group, res.version, namespace, res.plural, *([name] if name else []))

    def create(self, doc: dict, namespace: str = "default") -> dict:
        return self.custom.create_namespaced_custom_object(*self.path(doc["kind"], namespace=namespace), doc)

    def get(self, kind: str, name: str, namespace: str = "default") -> dict | None:
        response = self.plane.http("GET", f"/apis/{API_VERSION}/namespaces/{namespace}/{resource_for_kind(kind).plural}/{name}")
        return response.json() if response.status_code == 200 else None

    def delete(self, kind: str, name: str, namespace: str = "default") -> None:
        self.custom.delete_namespaced_custom_object(*self.path(kind, name, namespace))

    def crashes(self, since: int = 0) -> list[str]:
        """Log lines of handlers that raised something other than Kopf's retry errors."""
        return [
            line for record, line in zip(self.logs.records[since:], self.logs.lines[since:])
            if record.exc_info and not isinstance(record.exc_info[1], (kopf.TemporaryError, kopf.PermanentError))
            or "failed with an exception" in record.getMessage()
        ]


def put_secret(plane: Any, namespace: str, name: str, values: dict[str, str]) -> None:
    """Create or replace a Secret (and its namespace)."""
    plane.http("POST", "/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    body = {
        "apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": namespace},
        "data": {k: base64.b64encode(v.encode()).decode() for k, v in values.items()},
    }
    plane.http("DELETE", f"/api/v1/namespaces/{namespace}/secrets/{name}")
    plane.http("POST", f"/api/v1/namespaces/{namespace}/secrets", json=body).raise_for_status()


@contextlib.contextmanager
def running_operator(
    plane: Any,
    pinecone_url: str,
    *,
    api_key: str,
    verbose: bool = False,
    timing: Timing | None = None,
    **settings: Any,
) -> Iterator[RunningOperator]:
    """The operator, its API key in the default Secret, and the CRDs installed."""
    plane.install_crds()
    put_secret(plane, OPERATOR_NAMESPACE, SECRET_NAME, {"api-key": api_key})
    config = OperatorSettings(
        operator_namespace=OPERATOR_NAMESPACE,
        pinecone_host=pinecone_url,
        cluster_name="test",
        metrics_port=0,
        health_port=0,
        **settings,
    )
    services = Services.create(config, str(plane.kubeconfig), timing=timing)
    keeper = RecordKeeper()
    root = logging.getLogger()
    root.addHandler(keeper)
    # The in-process control plane's CEL evaluator logs every step at DEBUG: not the operator's.
    celpy = logging.getLogger("celpy")
    celpy_level = celpy.level
    celpy.setLevel(logging.INFO)
    args = ["run", "--standalone", "-A", *(["--verbose"] if verbose else [])]
    # `kopf run` makes the registry it is given the process-wide default: later runners of other
    # tests would find pinery's handlers (and a login into this control plane) there.
    default_registry = kopf.get_default_registry()
    try:
        with plane.kopf_login(), kopf.testing.KopfRunner(
            args, registry=build_registry(services), settings=kopf_settings(config), timeout=60
        ) as runner:
            yield RunningOperator(plane, services, runner, keeper, plane.custom_objects(), plane.core_v1())
    finally:
        kopf.set_default_registry(default_registry)
        root.removeHandler(keeper)
        celpy.setLevel(celpy_level)
        services.kube.api_client.close()
