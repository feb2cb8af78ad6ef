"""status.progress from trainer log lines."""

from datetime import datetime, timezone

from pinery.api.fsdpjob import Progress
from pinery.fsdpjob import progress_from_logs

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=timezone.utc)
LINE = ('{"event": "progress", "step": %d, "totalSteps": 100, "loss": %s, "learningRate": 0.001, "tokensPerSecond": 5120.5, "mfu": 0.41, '
        '"lastCheckpointStep": %d}')


def test_newest_progress_line_wins_and_fits_the_status_model():
    text = "\n".join(["starting", LINE % (10, "2.5", 0), "human readable step 10", LINE % (20, "2.25", 0)])
    progress = progress_from_logs(text, NOW)
    assert progress == {"step": 20, "totalSteps": 100, "lastCheckpointStep": 0, "loss": 2.25, "tokensPerSecond": 5120.5, "updatedAt": "2026-01-01T12:00:00Z",
                        "stepTime": "2026-01-01T12:00:00Z"}
    Progress.model_validate(progress)


def test_partial_and_noisy_lines_are_ignored():
    text = '"step": 5, "loss": 9}\n' + LINE % (30, "1.5", 20) + '\n{"event": "progress", "step": 40, "lo'
    assert progress_from_logs(text, NOW)["step"] == 30
    assert progress_from_logs("no json here\n{not json}\n[1, 2]\n", NOW) is None
    assert progress_from_logs('{"event": "progress"}\n{"event": "progress", "step": "7"}\n{"event": "other", "step": 3}', NOW) is None


def test_timestamps_prefix_sets_updated_at():
    text = "2026-01-01T11:59:30.123456789Z " + LINE % (5, "3.0", 0)
    assert progress_from_logs(text, NOW)["updatedAt"] == "2026-01-01T11:59:30Z"


def test_checkpoint_lines_update_the_last_checkpoint_step():
    text = LINE % (50, "1.0", 0) + '\n{"event": "checkpoint", "step": 50, "path": "/ckpt/step-50"}'
    assert progress_from_logs(text, NOW)["lastCheckpointStep"] == 50
    previous = {"step": 60, "loss": 0.9, "updatedAt": "2026-01-01T11:00:00Z"}
    only = progress_from_logs('{"event": "checkpoint", "step": 60}', NOW, previous)
    assert only == {**previous, "lastCheckpointStep": 60, "updatedAt": "2026-01-01T12:00:00Z"}


def test_values_without_a_json_form_or_of_the_wrong_type_are_dropped():
    text = '{"event": "progress", "step": 3, "loss": NaN, "tokensPerSecond": -1, "totalSteps": true}'
    assert progress_from_logs(text, NOW) == {"step": 3, "updatedAt": "2026-01-01T12:00:00Z", "stepTime": "2026-01-01T12:00:00Z"}


def test_nothing_new_returns_none():
    text = LINE % (10, "2.5", 0)
    first = progress_from_logs(text, NOW)
    assert progress_from_logs(text, NOW, first) is None
    assert progress_from_logs("", NOW, first) is None


def test_a_list_of_lines_works_too():
    assert progress_from_logs([LINE % (1, "4.0", 0)], NOW)["step"] == 1


def stamped(seconds: int, step: int) -> str:
    return f"2026-01-01T11:59:{seconds:02d}.5Z " + LINE % (step, "2.0", 0)


def test_step_time_is_the_first_line_of_the_newest_step_and_updated_at_the_last():
    progress = progress_from_logs("\n".join([stamped(1, 4), stamped(2, 5), stamped(3, 5), stamped(4, 5)]), NOW)
    assert (progress["step"], progress["stepTime"], progress["updatedAt"]) == (5, "2026-01-01T11:59:02Z", "2026-01-01T11:59:04Z")


def test_step_time_is_kept_while_the_step_stays_the_one_recorded():
    previous = progress_from_logs(stamped(2, 5), NOW)
    # The tail re-read: the first line of step 5 has left it; later lines still say 5.
    again = progress_from_logs("\n".join([stamped(8, 5), stamped(9, 5)]), NOW, previous)
    assert (again["stepTime"], again["updatedAt"]) == ("2026-01-01T11:59:02Z", "2026-01-01T11:59:09Z")


def test_a_lower_step_after_a_restart_is_a_change():
    previous = progress_from_logs(stamped(2, 50), NOW)
    resumed = progress_from_logs(stamped(30, 41), NOW, previous)
    assert (resumed["step"], resumed["stepTime"]) == (41, "2026-01-01T11:59:30Z")


def test_a_checkpoint_line_moves_updated_at_but_not_step_time():
    previous = progress_from_logs(stamped(2, 50), NOW)
    later = progress_from_logs("2026-01-01T11:59:40Z " + '{"event": "checkpoint", "step": 50}', NOW, previous)
    assert (later["stepTime"], later["updatedAt"], later["lastCheckpointStep"]) == ("2026-01-01T11:59:02Z", "2026-01-01T11:59:40Z", 50)
