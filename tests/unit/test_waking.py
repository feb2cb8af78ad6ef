"""Which watch events of an object wake its daemon (pinery.handlers.object_loop.Generations, and the
VectorIndex daemon's wait for its finalizer), and what the finalizer guard and owner references
of both kinds look like."""

from pinery.api.base import FINALIZER, controller_reference, has_finalizer
from pinery.handlers.object_loop import Generations


def test_only_a_newer_generation_than_the_last_read_wakes_and_only_once():
    g = Generations()
    assert not g.pass_read(1)
    assert not g.event_showed(1)  # the daemon's own status write, Kopf's finalizer, a label
    assert g.event_showed(2)
    assert not g.event_showed(2)  # more events of the same spec change
    assert not g.pass_read(2)
    assert not g.event_showed(2)


def test_before_the_first_read_events_wait_for_that_read():
    g = Generations()
    assert not g.event_showed(3)
    assert g.pass_read(2)  # answered from before the change: look again
    assert not g.pass_read(3)


def test_objects_without_generations_count_as_zero():
    g = Generations()
    assert not g.pass_read(None) and not g.event_showed(None)


def test_the_finalizer_guard():
    assert has_finalizer({"finalizers": ["other/thing", FINALIZER]})
    assert not has_finalizer({"finalizers": ["other/thing"]}) and not has_finalizer({})


def test_children_are_controlled_by_their_pinery_object():
    ref = controller_reference("FSDPJob", "train", "uid-1")
    assert ref == {"apiVersion": "pinery.dev/v1alpha1", "kind": "FSDPJob", "name": "train", "uid": "uid-1",
                   "controller": True, "blockOwnerDeletion": True}


def test_a_vectorindex_daemon_waiting_for_the_finalizer_is_woken_once_by_it():
    from pinery.handlers.vectorindex import Memory

    memory = Memory()
    memory.generations.pass_read(1)
    memory.unguarded = True  # its last pass found no finalizer
    assert not memory.event_wakes({"generation": 1})  # not there yet
    assert memory.event_wakes({"generation": 1, "finalizers": [FINALIZER]})
    # Kopf's own annotations, status writes: the same object again must not bring another pass
    # (after a terminal failure it would repeat the refused call)
    assert not memory.event_wakes({"generation": 1, "finalizers": [FINALIZER]})
    assert memory.finalizer_seen and not memory.unguarded
    assert memory.event_wakes({"generation": 2, "finalizers": [FINALIZER]})  # a new spec still does


def test_a_guarded_vectorindex_daemon_is_not_woken_by_its_finalizer():
    from pinery.handlers.vectorindex import Memory

    memory = Memory()
    memory.generations.pass_read(3)
    assert not memory.event_wakes({"generation": 3, "finalizers": [FINALIZER]})
