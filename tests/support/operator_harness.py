"""The real operator (`pinery.runtime.build_registry`) under Kopf's KopfRunner, in this process,
against a local control plane: the one harness every suite starts the operator with.

    with running_operator(control_plane, emulator.url, api_key=TEST_API_KEY) as op:
        op.custom.create_namespaced_custom_object(...)
        ...
        assert op.crashes() == []

or, for a test that stops an operator part-way and starts another, `OperatorRun(plane,
services, ...).start()` and `.stop()`.

Whatever it changes process-wide is put back when the operator stops: Kopf's default registry
(`kopf run` makes the registry it is given the process-wide default, so a later runner would find
pinery's handlers there), the logging configuration `kopf run` sets (the root logger's level
and Kopf's stderr handler, the `asyncio` logger), the log capture's handler and the `celpy`
logger's level, and the kubernetes client's kubeconfig location and $KUBECONFIG
(ControlPlane.kopf_login).
"""

from __future__ import annotations

import base64
import contextlib
import functools
import logging
import threading
from typing import Any, Callable, Iterator

import kopf.testing
from kopf._core.actions.loggers import _KopfStreamHandler as KopfStreamHandler

from pinery.api import API_VERSION, resource_for_kind
from pinery.runtime import build_registry, kopf_settings
from pinery.services import Services
from pinery.settings import OperatorSettings
from pinery.vectorindex.schedule import Timing

OPERATOR_NAMESPACE = "pinery-system"
SECRET_NAME = "pinecone-api-key"


class LogCapture(logging.Handler):
    """Every record of the process while attached, formatted once (with its exception text, so
    that arguments cannot change afterwards), except those of loggers named in `exclude`."""

    # The local servers the tests run beside the operator.
    SERVERS = ("pinery.local.", "aiohttp.", "celpy")

    def __init__(self, exclude: tuple[str, ...] = (), fmt: str = "%(levelname)s %(name)s %(message)s") -> None:
        super().__init__(logging.DEBUG)
        if exclude:
            self.addFilter(lambda record: not record.name.startswith(exclude))
        self.records: list[logging.LogRecord] = []
        self.lines: list[str] = []
        self._guard = threading.Lock()
        self.setFormatter(logging.Formatter(fmt))

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = self.format(record)
        except Exception:  # a record that cannot be formatted still counts as output
            line = repr(record.__dict__)
        with self._guard:
            self.records.append(record)
            self.lines.append(line)

    def text(self) -> str:
        with self._guard:
            return "\n".join(self.lines)

    def entries(self, since: int = 0) -> list[tuple[logging.LogRecord, str]]:
        """Each record from `since` on with its line, read in one go (the operator may be logging)."""
        with self._guard:
            return list(zip(self.records[since:], self.lines[since:], strict=True))


def restore_logging_config() -> Callable[[], None]:
    """What puts back the logging configuration that `kopf run` replaces (kopf's
    loggers.configure): the root logger's level and Kopf's stderr handler on it (pytest's own
    handlers, which come and go with the test phases, are left alone), and the `asyncio`
    logger's propagation and handlers."""
    root, aio = logging.getLogger(), logging.getLogger("asyncio")
    level, handlers = root.level, list(root.handlers)
    aio_propagate, aio_handlers = aio.propagate, list(aio.handlers)

    def restore() -> None:
        now = list(root.handlers)
        kept = [h for h in handlers if isinstance(h, KopfStreamHandler) or h in now]
        added = [h for h in now if h not in handlers and not isinstance(h, KopfStreamHandler)]
        root.handlers[:] = kept + added
        root.setLevel(level)
        aio.propagate = aio_propagate
        aio.handlers[:] = aio_handlers

    return restore


class OperatorRun:
    """The operator with `services`, watching `namespace` (all namespaces when None)."""

    def __init__(
        self,
        plane: Any,
        services: Services,
        *,
        namespace: str | None = None,
        verbose: bool = False,
        logs: LogCapture | None = None,
        timeout: float = 60,
        login: bool = True,
        close_client: bool = True,
    ) -> None:
        self.plane = plane
        self.services = services
        self.namespace = namespace
        self.verbose = verbose
        self.logs = logs
        self.timeout = timeout
        self.login = login  # point the kubernetes client's default kubeconfig at the plane
        self.close_client = close_client  # close services.kube.api_client on stop
        self.runner: kopf.testing.KopfRunner | None = None
        self._stack: contextlib.ExitStack | None = None
        self.priority = 100  # Kopf's peering priority, when the settings name a peering

    def args(self) -> list[str]:
        scope = [f"--namespace={self.namespace}"] if self.namespace else ["--all-namespaces"]
        peering = self.services.settings.peering
        ha = ["--peering", peering, "--priority", str(self.priority)] if peering else ["--standalone"]
        return ["run", *ha, *scope, *(["--verbose"] if self.verbose else [])]

    def start(self) -> "OperatorRun":
        assert self._stack is None, "the operator is already running"
        stack = contextlib.ExitStack()
        try:
            default_registry = kopf.get_default_registry()
            stack.callback(kopf.set_default_registry, default_registry)
            stack.callback(restore_logging_config())
            if self.close_client:
                stack.callback(self.services.kube.api_client.close)
            if self.logs is not None:
                # The in-process control plane's CEL evaluator logs every step at DEBUG: not the operator's.
                celpy = logging.getLogger("celpy")
                stack.callback(celpy.setLevel, celpy.level)
                celpy.setLevel(logging.INFO)
                root = logging.getLogger()
                root.addHandler(self.logs)
                stack.callback(root.removeHandler, self.logs)
            if self.login:
                stack.enter_context(self.plane.kopf_login())
            registry = build_registry(self.services)
            self.runner = stack.enter_context(
                kopf.testing.KopfRunner(self.args(), registry=registry, settings=kopf_settings(self.services.settings), timeout=self.timeout)
            )
        except BaseException:
            stack.close()
            raise
        self._stack = stack
        return self

    def stop(self, *exc_info: Any) -> kopf.testing.KopfRunner | None:
        """Stop the operator and put back what it changed; returns its runner. KopfRunner
        raises what the operator raised (chained to the exception in `exc_info`, if any)."""
        stack, self._stack = self._stack, None
        if stack is not None:
            stack.__exit__(*(exc_info or (None, None, None)))
        return self.runner

    def __enter__(self) -> "OperatorRun":
        return self.start()

    def __exit__(self, *exc_info: Any) -> None:
        self.stop(*exc_info)

    # --- pinery's objects -------------------------------------------------------------------

    @functools.cached_property
    def custom(self) -> Any:
        """The kubernetes client's CustomObjectsApi on the plane."""
        return self.plane.custom_objects()

    @functools.cached_property
    def core(self) -> Any:
        """The kubernetes client's CoreV1Api on the plane."""
        return self.plane.core_v1()

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

    # --- what it logged ---------------------------------------------------------------------

    def crashes(self, since: int = 0) -> list[str]:
        """Log lines of handlers that raised something other than Kopf's retry errors."""
        assert self.logs is not None, "the operator was started without a LogCapture"
        return [
            line for record, line in self.logs.entries(since)
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
) -> Iterator[OperatorRun]:
    """The operator on all namespaces, its API key in the default Secret, and the CRDs installed."""
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
    with OperatorRun(plane, services, verbose=verbose, logs=LogCapture()) as op:
        yield op
