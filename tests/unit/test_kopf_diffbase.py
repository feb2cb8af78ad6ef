"""Kopf builds no diff base for kinds whose handlers are all `on.event` (pinery.kopf_diffbase),
and no other handler reads one for them."""

from __future__ import annotations

from pathlib import Path

import kopf
import pytest
from kopf._cogs.structs.references import Resource

from pinery.kopf_diffbase import EVENT_ONLY_KINDS, EventOnlyAwareDiffBase, group_kind
from pinery.runtime import ANNOTATION_PREFIX, build_registry, kopf_settings
from pinery.services import Services
from pinery.settings import OperatorSettings
from tests.unit.test_kopf_connections import KUBECONFIG


def registry(tmp_path: Path) -> kopf.OperatorRegistry:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(KUBECONFIG)
    return build_registry(Services.create(OperatorSettings(), str(kubeconfig)))


# The event-only kinds as Kopf resolves them from the API server's discovery.
RESOURCES = [Resource("pinery.dev", "v1alpha1", "fsdpjobs", kind="FSDPJob"), Resource("", "v1", "pods", kind="Pod"),
             Resource("kueue.x-k8s.io", "v1beta2", "workloads", kind="Workload")]


def test_no_change_handler_daemon_or_timer_watches_an_event_only_kind(tmp_path: Path):
    """Kopf reads the diff only for change handlers (`_changing`) and daemons and timers
    (`_spawning`): kopf/_core/reactor/processing.py, `_detect_causes`."""
    assert {(r.group, r.kind) for r in RESOURCES} == EVENT_ONLY_KINDS
    reg = registry(tmp_path)
    for resource in RESOURCES:
        assert [h.id for part in (reg._changing, reg._spawning) for h in part.get_all_handlers()
                if h.selector is not None and h.selector.check(resource)] == []
        assert reg._watching.has_handlers(resource=resource)  # a kind pinery handles, by event


@pytest.mark.parametrize(
    "api_version, kind, expected",
    [
        ("pinery.dev/v1alpha1", "FSDPJob", ("pinery.dev", "FSDPJob")),
        ("v1", "Pod", ("", "Pod")),
        ("kueue.x-k8s.io/v1beta2", "Workload", ("kueue.x-k8s.io", "Workload")),
        ("pinery.dev/v1alpha1", "VectorIndex", ("pinery.dev", "VectorIndex")),
    ],
)
def test_group_kind(api_version, kind, expected):
    assert group_kind({"apiVersion": api_version, "kind": kind}) == expected


def body(api_version: str, kind: str) -> kopf.Body:
    return kopf.Body({"apiVersion": api_version, "kind": kind, "metadata": {"name": "a", "labels": {"x": "1"}},
                      "spec": {"n": 1}, "status": {"phase": "Running"}})


@pytest.mark.parametrize("api_version, kind", [("pinery.dev/v1alpha1", "FSDPJob"), ("v1", "Pod"), ("kueue.x-k8s.io/v1beta2", "Workload")])
def test_event_only_kinds_get_no_essence(api_version, kind):
    storage = kopf_settings(OperatorSettings()).persistence.diffbase_storage
    assert storage.build(body=body(api_version, kind)) is None


def test_other_kinds_get_kopfs_essence():
    """A VectorIndex has a delete handler: its essence is Kopf's own, built the same way."""
    ours = kopf_settings(OperatorSettings()).persistence.diffbase_storage
    kopfs = kopf.AnnotationsDiffBaseStorage(prefix=ANNOTATION_PREFIX, key="last-handled-configuration")
    vi = body("pinery.dev/v1alpha1", "VectorIndex")
    assert ours.build(body=vi) == kopfs.build(body=vi) == {"metadata": {"labels": {"x": "1"}}, "spec": {"n": 1}}


def test_an_empty_set_is_kopfs_diff_base_for_every_kind():
    """What the benchmarks' floor uses: it has change handlers on FSDPJobs."""
    storage = EventOnlyAwareDiffBase(event_only=(), prefix=ANNOTATION_PREFIX)
    assert storage.build(body=body("pinery.dev/v1alpha1", "FSDPJob")) == {"metadata": {"labels": {"x": "1"}}, "spec": {"n": 1}}
