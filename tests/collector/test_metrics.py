"""``/metrics`` with several scorer shards: their reports added up, behind as the slowest,
and the spans each shard scored."""

from __future__ import annotations

from rampart_otel.collector.metrics import Metrics, combined


def test_the_shards_reports_are_one_scorer_and_each_shard_has_its_spans_scored():
    metrics = Metrics()
    metrics.set_scorer(
        {"shard": 0, "spans_scored": 30, "runs_scored": 10, "lag_bytes": 5,
         "position": [2, 100], "verdicts": {"safe": 3, "unsafe": 1}},
        0,
    )  # fmt: skip
    metrics.set_scorer(
        {"shard": 1, "spans_scored": 12, "runs_scored": 4, "lag_bytes": 900,
         "position": [1, 700], "verdicts": {"unsafe": 2}},
        1,
    )  # fmt: skip
    scorer = metrics.scorer
    assert scorer["spans_scored"] == 42 and scorer["runs_scored"] == 14
    assert scorer["lag_bytes"] == 900  # the slowest shard's
    assert scorer["position"] == [1, 700]  # how far every shard has read
    assert scorer["verdicts"] == {"safe": 3, "unsafe": 3}
    text = metrics.exposition()[0].decode()
    assert 'rampart_otel_shard_spans_scored_total{shard="0"} 30.0' in text
    assert 'rampart_otel_shard_spans_scored_total{shard="1"} 12.0' in text
    assert "rampart_otel_spans_scored_total 42.0" in text


def test_one_shard_is_its_own_report():
    report = {"shard": 0, "spans_scored": 7, "position": [1, 0]}
    assert combined([report]) == report
