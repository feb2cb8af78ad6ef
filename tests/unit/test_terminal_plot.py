"""The terminal line chart of `pinery progress` (pinery.cli.plot) and what the command prints
from a job and rank 0's log (pinery.cli.progress.report)."""

from __future__ import annotations

import io
import math

import pytest

from pinery.cli.plot import columns, line_chart, number
from pinery.cli.progress import can_draw_unicode, report, summary

DECAY = [(step, 4 * math.exp(-step / 300) + 1.5) for step in range(10, 1001, 10)]


def dots(lines, dot="•"):
    """(row, column) of every dot of the grid (the rows above the axis)."""
    return [(r, c) for r, line in enumerate(lines[:-2]) for c, ch in enumerate(line) if ch == dot]


@pytest.mark.parametrize("value, text", [(0, "0"), (4.5, "4.5"), (2.3456789, "2.346"), (51200.4, "51200"),
                                         (1300.0, "1300"), (123456789.0, "1.235e+08"), (0.0001234, "1.234e-04")])
def test_number(value, text):
    assert number(value) == text


def test_columns_average_the_points_in_equal_x_ranges():
    assert columns([(0, 1.0), (1, 3.0), (10, 5.0)], 2) == [2.0, 5.0]
    assert columns([(0, 1.0), (10, 5.0)], 3) == [1.0, None, 5.0]
    assert columns([(7, 2.0), (7, 4.0)], 4) == [3.0, None, None, None]  # one x: all in the first column


def test_a_falling_loss_is_drawn_falling_within_the_width():
    lines = line_chart(DECAY, width=60, height=10, x_label="step")
    assert all(len(line) <= 60 for line in lines)
    assert len(lines) == 12  # 10 rows, the axis, the x range
    got = dots(lines)
    assert got[0][0] == 0 and got[-1][0] == 9  # starts at the top row, ends at the bottom row
    by_column = sorted((c, r) for r, c in got)
    rows = [r for _, r in by_column]
    assert rows == sorted(rows)  # never rises
    assert lines[0].startswith("5.369 │") and lines[9].startswith("1.643 │")
    assert lines[-2].lstrip().startswith("└─") and lines[-1].split() == ["10", "step", "1000"]


def test_ascii_and_narrow_terminals():
    lines = line_chart([(10, 4.5), (20, 3.25)], width=30, height=4, ascii=True)
    assert "•" not in "".join(lines) and "│" not in "".join(lines)
    assert lines[0] == " 4.5 |*" and lines[3].endswith("*") and lines[3].startswith("3.25 |")
    assert lines[4].strip() == "+" + "-" * (30 - 6)
    assert all(len(line) <= 30 for line in line_chart(DECAY, width=5, height=1))  # clamped to the minimum size


def test_one_point_and_no_points():
    lines = line_chart([(10, 4.5)], width=30, height=3, ascii=True)
    assert lines[0] == "4.5 |*" and lines[1] == "    |" and lines[-1].split() == ["10"]
    assert line_chart([], 40) == [] and line_chart([(1, float("nan"))], 40) == []


JOB = {"metadata": {"name": "llm", "namespace": "ml"}, "spec": {"maxRestarts": 3},
       "status": {"phase": "Running", "restarts": 1,
                  "progress": {"step": 20, "totalSteps": 100, "loss": 3.25, "tokensPerSecond": 1300.0, "lastCheckpointStep": 20}}}
LOG = ("2025-01-01T00:00:00.000000000Z W1130 torch.distributed.run: Setting OMP_NUM_THREADS\n"
       '2025-01-01T00:00:01.000000000Z {"event": "progress", "step": 10, "loss": 4.5, "tokensPerSecond": 1200.0}\n'
       '{"event": "checkpoint", "step": 10}\n'
       '{"event": "progress", "step": 15}\n'
       '{"event": "progress", "step": 20, "loss": 3.25, "tokensPerSecond": 1300.0}\n')


def test_summary_says_where_the_job_stands():
    assert summary(JOB) == ("fsdpjob ml/llm: Running, step 20/100, loss 3.25, 1300 tokens/s, "
                            "last checkpoint at step 20, restarts 1/3")
    assert summary({"metadata": {"name": "new", "namespace": "ml"}}) == "fsdpjob ml/new: Pending, restarts 0/3"


def test_report_draws_the_loss_of_each_progress_line_with_one():
    lines = report(JOB, LOG, width=50, height=5, ascii=True)
    assert lines[0] == summary(JOB)
    assert lines[1] == "loss over 2 progress lines of rank 0, steps 10 to 20:"
    assert lines[2].startswith(" 4.5 |*") and lines[6].startswith("3.25 |") and lines[6].endswith("*")
    assert lines[-1] == "tokens/s: last 1300, mean 1250, min 1200, max 1300"


def test_report_without_a_log_or_without_losses():
    assert report(JOB, None, 50, 5, True)[1].startswith("no log of rank 0")
    assert report(JOB, "hello\n", 50, 5, True)[1] == "rank 0 has printed no progress line with a loss yet"


def test_unicode_only_where_the_stream_can_encode_it():
    assert can_draw_unicode(io.TextIOWrapper(io.BytesIO(), encoding="utf-8"))
    assert not can_draw_unicode(io.TextIOWrapper(io.BytesIO(), encoding="ascii"))
