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


def test_a_restarted_shard_neither_loses_nor_doubles_the_verdicts_counted():
    # The store's verdicts before the start are counted once (read at start); a shard's
    # replaced process keeps what it counted. A restarted shard 0 used to re-read the
    # store's counts, the other shards' verdicts of this start included: /metrics read
    # 198 verdicts of each status with 150 stored.
    metrics = Metrics()
    metrics.stored_verdicts = {"safe": 10}
    metrics.set_scorer({"shard": 0, "pid": 100, "verdicts": {"safe": 3}, "runs_scored": 3}, 0)
    metrics.set_scorer(
        {"shard": 1, "pid": 101, "verdicts": {"safe": 2, "unsafe": 1}, "runs_scored": 3}, 1
    )
    metrics.set_scorer({"shard": 0, "pid": 102, "verdicts": {"safe": 1}, "runs_scored": 1}, 0)
    assert metrics.verdicts_scored() == {"safe": 6, "unsafe": 1}
    assert metrics.scorer["runs_scored"] == 7
    text = metrics.exposition()[0].decode()
    assert 'rampart_otel_verdicts_total{status="safe"} 16.0' in text
    assert 'rampart_otel_verdicts_total{status="unsafe"} 1.0' in text
