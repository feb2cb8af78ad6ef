"""When an FSDPJob's daemon is woken: by changes it did not make itself, never by its own writes."""

from pinery.handlers.fsdpjob import Wakeups, _replaced


def woken(w: Wakeups, name: str = "job") -> bool:
    event = w.event("ns", name)
    was = event.is_set()
    event.clear()
    return was


def test_status_writes_and_metadata_changes_of_the_job_do_not_wake_it():
    w = Wakeups()
    w.event("ns", "job")
    w.seen("ns", "job", 1)
    w.job_changed("ns", "job", 1)  # its own status patch, a label
    assert not woken(w)


def test_a_new_generation_of_the_spec_wakes_it():
    w = Wakeups()
    w.event("ns", "job")
    w.seen("ns", "job", 1)
    w.job_changed("ns", "job", 2)
    assert woken(w)
    w.seen("ns", "job", 2)
    w.job_changed("ns", "job", 2)
    assert not woken(w)


def test_a_spec_change_seen_while_the_first_read_was_in_flight_wakes_it_after_that_read():
    w = Wakeups()
    w.event("ns", "job")
    w.job_changed("ns", "job", 2)  # before any pass read the job: that read decides
    assert not woken(w)
    w.seen("ns", "job", 1)  # the read answered from before the change
    assert woken(w)
    w.seen("ns", "job", 2)
    assert not woken(w)


def test_pods_wake_it_unless_the_event_shows_the_pod_as_the_daemon_created_it():
    w = Wakeups()
    w.event("ns", "job")
    w.created("ns", "job", {"metadata": {"name": "job-node-0", "resourceVersion": "10"}})
    w.pod_changed("ns", "job", "job-node-0", "10")  # ADDED, as created
    assert not woken(w)
    w.pod_changed("ns", "job", "job-node-0", "11")  # scheduled, started, failed...
    assert woken(w)
    w.pod_changed("ns", "job", "job-node-1", "12")  # a pod it did not create
    assert woken(w)
    w.pod_changed("ns", "other", "other-node-0", "13")  # another job's
    assert not woken(w)
    assert woken(w, "other") is False


def test_forget_drops_everything_of_the_job():
    w = Wakeups()
    w.event("ns", "job")
    w.seen("ns", "job", 1)
    w.created("ns", "job", {"metadata": {"name": "job-node-0", "resourceVersion": "10"}})
    w.forget("ns", "job", w.loop("ns", "job"))
    w.pod_changed("ns", "job", "job-node-0", "10")
    w.job_changed("ns", "job", 5)
    assert all(not table for table in (w._loops, w._own))


def test_created_objects_replace_those_of_the_same_name_in_what_a_pass_read():
    read = [{"metadata": {"name": "a", "resourceVersion": "1"}}, {"metadata": {"name": "b", "resourceVersion": "2"}}]
    new = [{"metadata": {"name": "b", "resourceVersion": "5"}}, {"metadata": {"name": "c", "resourceVersion": "6"}}]
    assert [(o["metadata"]["name"], o["metadata"]["resourceVersion"]) for o in _replaced(read, new)] == [("a", "1"), ("b", "5"), ("c", "6")]


def test_a_changed_queue_name_label_wakes_it_though_labels_keep_the_generation():
    w = Wakeups()
    w.event("ns", "job")
    w.job_changed("ns", "job", 1)
    w.queue_label("ns", "job", "team-a")  # before any pass read it: nothing to compare with
    assert not woken(w)
    w.queue_label("ns", "job", "team-a", read=True)
    w.queue_label("ns", "job", "team-a")  # its own status patch: the same label
    assert not woken(w)
    w.queue_label("ns", "job", "team-b")
    assert woken(w)
    w.queue_label("ns", "job", "team-b")  # once
    assert not woken(w)
    w.queue_label("ns", "job", None)  # removed
    assert woken(w)


def test_a_snapshot_gives_back_what_it_took_without_managed_fields_each_time_a_fresh_copy():
    from pinery.handlers.fsdpjob import Snapshot

    managed = [{"manager": "kopf", "operation": "Update"}]
    job = {"metadata": {"name": "job", "managedFields": managed}, "status": {"phase": "Running"}}
    pod = {"metadata": {"name": "job-node-0", "uid": "u", "managedFields": managed}, "spec": {"nodeName": "n"}}
    snapshot = Snapshot.take(job, [pod], None, {"metadata": {"name": "job-trainer"}})
    assert snapshot.phase == "Running"
    first = snapshot.open()
    assert first == ({"metadata": {"name": "job"}, "status": {"phase": "Running"}},
                     [{"metadata": {"name": "job-node-0", "uid": "u"}, "spec": {"nodeName": "n"}}],
                     None, {"metadata": {"name": "job-trainer"}})
    first[0]["status"]["phase"] = "changed by a plan"
    assert snapshot.open()[0]["status"]["phase"] == "Running"
    assert job["metadata"]["managedFields"] == managed  # the objects taken are left as they were


def test_a_deleted_job_wakes_its_daemon_to_end_and_a_new_one_of_the_same_name_gets_a_loop_of_its_own():
    w = Wakeups()
    old = w.loop("ns", "job")
    w.seen("ns", "job", 1)
    w.deleted("ns", "job")  # the DELETED event
    assert old.wake.is_set() and old.gone
    new = w.loop("ns", "job")  # the daemon of a job created again under the name
    assert new is not old and not new.gone
    w.created("ns", "job", {"metadata": {"name": "job-node-0", "resourceVersion": "20"}})
    w.forget("ns", "job", old)  # the old daemon ends after the new one began: the new one's state stays
    assert w.loop("ns", "job") is new
    w.pod_changed("ns", "job", "job-node-0", "20")  # its own pod, as created
    assert not new.wake.is_set()
    w.pod_changed("ns", "job", "job-node-0", "21")
    assert new.wake.is_set()
    w.forget("ns", "job", new)
    assert all(not table for table in (w._loops, w._own))


def test_a_deleted_job_without_a_daemon_is_nothing_to_wake():
    w = Wakeups()
    w.deleted("ns", "job")
    assert not w._loops


def test_a_pods_event_that_comes_before_the_answer_to_its_creation_does_not_wake_it():
    """The watch can be quicker than the answer: the pod's ADDED event, of the very
    resourceVersion the creation made, is the pass's own write."""
    w = Wakeups()
    w.event("ns", "job")
    w.creating("ns", "job", "job-node-0")
    w.pod_changed("ns", "job", "job-node-0", "10")
    assert not woken(w)
    w.created("ns", "job", {"metadata": {"name": "job-node-0", "resourceVersion": "10"}})
    assert not woken(w)
    w.pod_changed("ns", "job", "job-node-0", "10")  # again (a relist): still its own
    assert not woken(w)
    w.pod_changed("ns", "job", "job-node-0", "11")
    assert woken(w)


def test_a_change_after_the_creation_seen_before_its_answer_wakes_it_once_the_answer_comes():
    w = Wakeups()
    w.event("ns", "job")
    w.creating("ns", "job", "job-node-0")
    w.pod_changed("ns", "job", "job-node-0", "10")
    w.pod_changed("ns", "job", "job-node-0", "12")  # bound by the scheduler already
    assert not woken(w)
    w.created("ns", "job", {"metadata": {"name": "job-node-0", "resourceVersion": "10"}})
    assert woken(w)


def test_events_held_for_a_creation_that_failed_wake_it():
    w = Wakeups()
    w.event("ns", "job")
    w.creating("ns", "job", "job-node-0")
    w.not_created("ns", "job", "job-node-0")  # no event came meanwhile
    assert not woken(w)
    w.creating("ns", "job", "job-node-0")
    w.pod_changed("ns", "job", "job-node-0", "7")  # a pod of that name the pass did not make
    w.not_created("ns", "job", "job-node-0")
    assert woken(w)
    assert not w._creating


def test_the_pods_the_watch_shows_of_a_job_until_they_are_gone():
    """Whether a new job's first pass may skip its pod list (JobLoop.without_pods)."""
    w = Wakeups()
    assert not w.has_pods("ns", "job")
    w.pod_seen("ns", "job", "job-node-0")
    w.pod_seen("ns", "job", "job-node-1")
    w.pod_seen("ns", "job", "job-node-0")  # a later event of the same pod
    assert w.has_pods("ns", "job") and not w.has_pods("ns", "other") and not w.has_pods("other", "job")
    w.pod_seen("ns", "job", "job-node-0", gone=True)
    assert w.has_pods("ns", "job")
    w.pod_seen("ns", "job", "job-node-1", gone=True)
    w.pod_seen("ns", "job", "job-node-1", gone=True)  # twice (a relist), or of a pod never seen
    assert not w.has_pods("ns", "job") and not w._pods
    w.pod_seen("ns", "job", "job-node-0")
    w.forget("ns", "job", w.loop("ns", "job"))  # a daemon ending does not forget the job's pods
    assert w.has_pods("ns", "job")
