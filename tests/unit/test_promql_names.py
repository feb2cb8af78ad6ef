"""The tokenizer the chart's monitoring tests read PromQL with (tests/support/promql.py)."""

from __future__ import annotations

import pytest

from tests.support.promql import balanced, grouping_labels, metric_names


@pytest.mark.parametrize(
    "expr, names",
    [
        ("pinery_fsdpjob_loss", {"pinery_fsdpjob_loss"}),
        ('pinery_fsdpjob_loss{namespace=~"$namespace", fsdpjob=~"a|b"}', {"pinery_fsdpjob_loss"}),
        ('sum by (operation, outcome) (rate(pinery_pinecone_calls_total{outcome!="ok"}[5m]))', {"pinery_pinecone_calls_total"}),
        ("max_over_time(pinery_fsdpjob_stalled[15m:1m]) > 0", {"pinery_fsdpjob_stalled"}),
        ("(a_m - b_m) <= clamp_min(0.2 * a_m, 1) and a_m > 0 unless c_m == 1", {"a_m", "b_m", "c_m"}),
        ("rate(x_total[$__rate_interval]) / on(job) group_left(instance) y", {"x_total", "y"}),
        ("x offset 5m > bool 1e3", {"x"}),
        ('label_values(pinery_fsdpjob_max_restarts{namespace=~"$namespace"}, fsdpjob)', {"pinery_fsdpjob_max_restarts"}),
        ('{__name__="x"}', set()),
        ('count without (state) (pinery_vectorindexes{state="Ready"})', {"pinery_vectorindexes"}),
    ],
)
def test_metric_names(expr, names):
    assert metric_names(expr) == names


def test_balanced_and_grouping():
    assert balanced('sum(rate(x{a="(" }[5m]))') and not balanced("sum(rate(x[5m])") and not balanced("x{a=1)")
    assert grouping_labels("sum by (operation) (rate(x[1m]))") == {"operation"} and grouping_labels("x > 1") is None
