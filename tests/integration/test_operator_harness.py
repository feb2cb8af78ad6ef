"""The operator harness (tests/support/operator_harness.py) leaves the process as it found it:
Kopf's default registry (which `kopf run` replaces with pinery's), the logging configuration
(`kopf run`'s and the log capture's), $KUBECONFIG and the kubernetes client's kubeconfig
location, whichever way a suite starts the operator."""

from __future__ import annotations

import logging
import os

import kopf
import kubernetes.config.kube_config as kube_config
import pytest

from tests.support import fsdpjob, vectorindex
from tests.support.emulator import TEST_API_KEY
from tests.support.operator_harness import running_operator
from tests.support.waiting import wait_for


def process_state() -> tuple:
    root, aio = logging.getLogger(), logging.getLogger("asyncio")
    return (kopf.get_default_registry(), list(root.handlers), root.level, logging.getLogger("celpy").level,
            aio.propagate, list(aio.handlers), os.environ.get("KUBECONFIG"), kube_config.KUBE_CONFIG_DEFAULT_LOCATION)


def pinery_handlers(registry) -> list[str]:
    """The ids of the handlers of pinery's modules in a Kopf registry."""
    handlers = [*registry._activities.get_all_handlers(), *registry._changing.get_all_handlers(),
                *registry._spawning.get_all_handlers(), *registry._indexing.get_all_handlers(),
                *registry._watching.get_all_handlers(), *registry._webhooks.get_all_handlers()]
    return [h.id for h in handlers if getattr(h.fn, "__module__", "").startswith("pinery")]


def replaced_default(before: tuple) -> object:
    """Kopf's default registry once `kopf run` (in the runner's thread) has replaced it."""
    return wait_for(lambda: (r := kopf.get_default_registry()) is not before[0] and r, timeout=10,
                    what="kopf run to make pinery's registry the default")


def check_restored(before: tuple, during: object) -> None:
    assert pinery_handlers(during) != []
    after = process_state()
    assert after == before
    assert pinery_handlers(kopf.get_default_registry()) == []


def test_running_operator_restores_kopfs_default_registry(control_plane, pinecone_emulator):
    before = process_state()
    with running_operator(control_plane, pinecone_emulator.url, api_key=TEST_API_KEY):
        during = replaced_default(before)
    check_restored(before, during)


def test_the_fsdpjob_operator_restores_kopfs_default_registry(control_plane):
    control_plane.install_crds()
    before = process_state()
    op = fsdpjob.new_operator(control_plane, "default").start()
    try:
        during = replaced_default(before)
    finally:
        op.stop()
    check_restored(before, during)


@pytest.mark.slow
def test_the_vectorindex_operator_restores_kopfs_default_registry(tmp_path):
    before = process_state()
    with vectorindex.world(tmp_path) as w:
        assert w.operator is not None
        during = replaced_default(before)
    check_restored(before, during)


def test_a_failed_run_restores_what_it_changed(control_plane, pinecone_emulator):
    """An operator whose run fails (here: Kopf's command line refuses its arguments) still puts
    back what the harness changed."""
    before = process_state()
    services = vectorindex.operator_services(control_plane, pinecone_emulator.url)
    run = vectorindex.Operator(control_plane, services, logs=vectorindex.vi_logs())
    run.args = lambda: ["no-such-command"]  # type: ignore[method-assign]
    with pytest.raises(SystemExit):  # Kopf's command line refuses the command
        with run:
            pass
    assert process_state() == before
