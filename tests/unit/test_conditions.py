from pinery.api.conditions import get_condition, is_true, now_rfc3339, set_condition


def test_new_condition_is_appended_with_time_and_generation():
    conds = set_condition([], "Ready", "False", "Creating", "waiting", generation=2, now="T1")
    assert conds == [
        {
            "type": "Ready",
            "status": "False",
            "reason": "Creating",
            "message": "waiting",
            "lastTransitionTime": "T1",
            "observedGeneration": 2,
        }
    ]


def test_same_status_keeps_transition_time_but_updates_reason_and_message():
    conds = set_condition([], "Ready", "False", "Creating", "a", now="T1")
    conds = set_condition(conds, "Ready", "False", "Unauthorized", "b", now="T2")
    assert conds[0]["lastTransitionTime"] == "T1"
    assert conds[0]["reason"] == "Unauthorized" and conds[0]["message"] == "b"


def test_status_change_moves_transition_time():
    conds = set_condition([], "Ready", "False", "Creating", now="T1")
    conds = set_condition(conds, "Ready", "True", "IndexReady", now="T2")
    assert conds[0]["lastTransitionTime"] == "T2"
    assert is_true(conds, "Ready")


def test_other_conditions_keep_their_place():
    conds = set_condition([], "Ready", "True", "A", now="T1")
    conds = set_condition(conds, "Synced", "True", "B", now="T1")
    conds = set_condition(conds, "Ready", "False", "C", now="T2")
    assert [c["type"] for c in conds] == ["Ready", "Synced"]
    assert get_condition(conds, "Synced")["reason"] == "B"
    assert get_condition(conds, "Missing") is None
    assert not is_true(conds, "Missing")


def test_input_list_is_not_mutated():
    original = [{"type": "Ready", "status": "True", "reason": "A", "message": "", "lastTransitionTime": "T1"}]
    snapshot = [dict(c) for c in original]
    set_condition(original, "Ready", "False", "B", now="T2")
    assert original == snapshot


def test_timestamp_format():
    stamp = now_rfc3339()
    assert len(stamp) == 20 and stamp.endswith("Z") and stamp[10] == "T"
