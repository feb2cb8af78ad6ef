"""A Kopf daemon registered without a finalizer (pinery.kopf_daemons). That Kopf then puts none
on its object is shown with Kopf running: the pass queues' sentinel on the peering object,
tests/integration/test_peering_pause.py."""

import dataclasses

import kopf
import pytest

from pinery.kopf_daemons import without_finalizer


def daemons(registry: kopf.OperatorRegistry) -> dict[str, object]:
    return {h.id: h for h in registry._spawning.get_all_handlers()}


def test_the_daemon_is_registered_again_requiring_no_finalizer_and_otherwise_the_same():
    registry = kopf.OperatorRegistry()

    @kopf.daemon("example.dev", "v1", "things", id="mine", registry=registry, cancellation_timeout=5.0)
    async def mine(**_):
        pass

    @kopf.daemon("example.dev", "v1", "things", id="other", registry=registry)
    async def other(**_):
        pass

    before = daemons(registry)
    assert before["mine"].requires_finalizer is True  # what kopf.daemon always registers
    without_finalizer(registry, "mine")
    after = daemons(registry)
    assert after["mine"].requires_finalizer is False
    assert dataclasses.replace(after["mine"], requires_finalizer=True) == before["mine"]
    assert after["other"] is before["other"]
    assert list(after) == ["mine", "other"]  # in place: the order Kopf spawns them in stays


def test_an_unknown_daemon_is_an_error_not_a_silent_finalizer():
    registry = kopf.OperatorRegistry()
    with pytest.raises(LookupError, match="nope"):
        without_finalizer(registry, "nope")
