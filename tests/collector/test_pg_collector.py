"""Collectors writing one shared PostgreSQL results store (``--results URL``): each scores its
own segments and resumes from its own checkpoint there, retention reads that checkpoint,
``audit``/``diff``/``rescore`` read the store; a store that cannot be used stops the start
with one line."""

from __future__ import annotations

import json
import multiprocessing
import random
import socket
import string
import urllib.request
from pathlib import Path

import psycopg
import pytest
from cli_runner import run_cli
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from ports import closed_port

from collector.harness import POLICY, make_traces, spawn, wait_for, write_config
from collector.test_scorer import Clock
from rampart_otel.collector import scorer as scorer_module
from rampart_otel.collector.config import CollectorConfig, load_config
from rampart_otel.collector.scorer import Scorer, make_evaluator, result_rows
from rampart_otel.errors import ConfigError
from rampart_otel.parallel import owner
from rampart_otel.storage.checkpoint import reconcile_checkpoint
from rampart_otel.storage.pg_results import PgResultsStore
from rampart_otel.storage.pg_schema import KEY_CHARS, SCHEMA_VERSION, stored_key
from rampart_otel.storage.protocol import VerdictStore
from rampart_otel.storage.results import ResultsStore, span_set
from rampart_otel.storage.retention import Retention
from rampart_otel.storage.segments import SegmentWriter, list_segments


def post(url: str, body: bytes) -> None:
    request = urllib.request.Request(
        url, data=body, headers={"Content-Type": "application/x-protobuf"}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        assert response.status == 200


def data_dir_with_policy(tmp_path: Path) -> tuple[Path, SegmentWriter]:
    """A collector's data directory holding the test policy, and a writer of its segments."""
    data = tmp_path / "data"
    data.mkdir()
    write_config(data / "policy.yaml", POLICY)
    return data, SegmentWriter(data / "segments")


def scorer_on(store: VerdictStore, data: Path, clock: Clock) -> Scorer:
    return Scorer(
        data / "segments",
        store,
        make_evaluator([data / "policy.yaml"], []),
        idle=5,
        max_wait=60,
        clock=clock,
    )


def score_all(scorer: Scorer, clock: Clock) -> None:
    scorer.step()
    clock.now += 100
    scorer.step()


def statuses(store: VerdictStore) -> list[tuple[str, int, str, str]]:
    return sorted((r.run_id, r.revision, r.check_id, r.status) for r in store.results())


def test_the_scorer_stores_in_postgresql_what_it_stores_in_results_db(
    tmp_path: Path, pg_url: str
) -> None:
    data, writer = data_dir_with_policy(tmp_path)
    writer.append_wait(encode_spans(make_traces(3, tool="delete_file")).SerializeToString(), 30)
    writer.append_wait(encode_spans(make_traces(2)).SerializeToString(), 30)
    writer.close()
    sqlite = ResultsStore(data / "results.db")
    pg = PgResultsStore(pg_url, instance="one")
    for store in (sqlite, pg):
        clock = Clock()
        score_all(scorer_on(store, data, clock), clock)
    assert len({run for run, *_ in statuses(pg)}) == 5
    assert "unsafe" in {status for *_, status in statuses(pg)}
    assert statuses(pg) == statuses(sqlite)
    assert pg.checkpoint() == sqlite.checkpoint() is not None
    # a restart resumes from the stored checkpoint: nothing is scored twice
    clock = Clock()
    again = scorer_on(PgResultsStore(pg_url, instance="one"), data, clock)
    assert again.position == pg.checkpoint()
    score_all(again, clock)
    assert again.stats.runs_scored == 0
    assert statuses(pg) == statuses(sqlite)


def test_reconcile_and_retention_use_this_instances_checkpoint(tmp_path: Path, pg_url: str) -> None:
    data = tmp_path / "data"
    writer = SegmentWriter(data / "segments", segment_max_bytes=4096)
    for _ in range(3):
        writer.append_wait(b"x" * 5000, 30)  # one segment each
    writer.close()
    segments = [seq for seq, _ in list_segments(data / "segments")]
    assert len(segments) >= 3
    for name, checkpoint in (("mine", (segments[1], 0)), ("other", (99, 0))):
        store = PgResultsStore(pg_url, instance=name)
        with store.transaction() as txn:
            txn.set_checkpoint(*checkpoint)
        store.close()
    # the other instance's checkpoint is past these segments' end; mine is inside them
    moved = reconcile_checkpoint(
        data / "results.db", data / "segments", results_url=pg_url, instance="other"
    )
    assert moved == (segments[-1], 0)
    kept = reconcile_checkpoint(
        data / "results.db", data / "segments", results_url=pg_url, instance="mine"
    )
    assert kept == (segments[1], 0)
    retention = Retention(data, 0, None, results_url=pg_url, instance="mine")
    assert len(retention.run(writing=segments[-1]).deleted) == 1  # only what lies before mine
    assert [seq for seq, _ in list_segments(data / "segments")] == segments[1:]
    nobody = Retention(data, 0, None, results_url=pg_url, instance="nobody")
    assert nobody.run(writing=segments[-1]).deleted == []  # no checkpoint: keep everything


def test_the_config_takes_only_postgresql_urls_and_names_the_instance(tmp_path: Path) -> None:
    path = write_config(tmp_path / "c.yaml", "results: sqlite:///x.db\n")
    with pytest.raises(ConfigError, match=r"results: .*postgresql:// URL"):
        load_config(path)
    config = load_config(None, overrides={"results": "postgresql://h/db", "data_dir": "d"})
    assert config.instance() == f"{socket.gethostname()}:{Path('d').resolve()}"
    named = load_config(None, overrides={"results": "postgres://h/db", "results_instance": "e1"})
    assert named.instance() == "e1"


def test_collect_with_a_store_that_is_down_stops_at_start_in_one_line(tmp_path: Path) -> None:
    policy = write_config(tmp_path / "policy.yaml", POLICY)
    with closed_port() as port:
        url = f"postgresql://postgres:hunter2@127.0.0.1:{port}/x"
        proc = run_cli(
            "collect", "--http", "127.0.0.1:0", "--grpc", "off", "--data-dir", tmp_path / "d",
            "--policy", policy, "--results", url, timeout=60,
        )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert "cannot connect" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "hunter2" not in proc.stderr


def test_two_collectors_share_one_store_and_audit_diff_rescore_read_it(
    tmp_path: Path, pg_url: str
) -> None:
    policy = write_config(tmp_path / "policy.yaml", POLICY)
    config = write_config(
        tmp_path / "collector.yaml",
        f"assembly:\n  idle_seconds: 0.3\nresults: {pg_url}\nstorage:\n  fsync: false\n",
    )
    sent = {"east": 3, "west": 2}
    for name, traces in sent.items():
        collector = spawn(tmp_path / name, config, "--policy", str(policy))
        try:
            spans = make_traces(traces, tool="delete_file" if name == "east" else "search")
            post(collector.traces_url, encode_spans(spans).SerializeToString())
            wait_for(
                lambda c=collector, n=traces: (
                    c.metrics().get("rampart_otel_runs_scored_total", 0) >= n
                ),
                60,
                f"{name}'s runs to be scored",
            )
            assert collector.terminate() == 0, collector.log.read_text()
        finally:
            if collector.process.poll() is None:
                collector.kill()
        assert not (tmp_path / name / "results.db").exists()
    store = PgResultsStore(pg_url, readonly=True)
    instances = store.db.execute("SELECT instance FROM checkpoint ORDER BY instance").fetchall()
    assert [row[0].rsplit("/", 1)[1] for row in instances] == ["east", "west"]
    proc = run_cli("audit", "--results", pg_url, "--json", "--limit", "all", timeout=60)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert len({result["run_id"] for result in report["results"]}) == 5
    unsafe = {r["run_id"] for r in report["results"] if r["status"] == "unsafe"}
    assert len(unsafe) == 3  # east's delete_file runs
    # rescore east's runs under v2 from east's segments; diff v1 -> v2 in the shared store
    v2 = write_config(tmp_path / "policy-v2.yaml", POLICY.replace("version: 1", "version: 2"))
    proc = run_cli(
        "rescore", "--data-dir", tmp_path / "east", "--policy", v2, "--results", pg_url,
        timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "3 runs re-scored" in proc.stdout
    # west's two runs are west's to re-score, not lost spans
    assert "could not be re-scored" not in proc.stdout, proc.stdout
    assert "2 stored runs have no spans in this data directory's segments" in proc.stdout
    proc = run_cli("diff", "--results", pg_url, "--json", timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    compared = json.loads(proc.stdout)
    assert compared["compared"]["runs"] == 3
    assert compared["runs_only_in_from"] == 2  # west's runs were not re-scored


def run_scorer_process(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, url: str
) -> dict[str, object] | None:
    """``run_process`` in this process (without its parent-death signal); what it reported."""
    monkeypatch.setattr(scorer_module, "_die_with_parent", lambda: None)
    monkeypatch.setattr(scorer_module, "STORE_RETRY_SECONDS", 0.05)
    data = tmp_path / "data"
    data.mkdir(exist_ok=True)
    policy = write_config(tmp_path / "policy.yaml", POLICY)
    config = CollectorConfig(data_dir=data, policies=[policy], results=url)
    parent, child = multiprocessing.Pipe()
    scorer_module.run_process(config.model_dump_json(), child)
    return parent.recv() if parent.poll(0) else None


def test_a_store_that_is_down_makes_the_scorer_exit_to_be_restarted_not_give_up(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with closed_port() as port:
        url = f"postgresql://postgres@127.0.0.1:{port}/x"
        report = run_scorer_process(monkeypatch, tmp_path, url)
    assert report is not None and "fatal" not in report  # not "fatal": it is restarted
    assert "cannot connect" in str(report["store_down"])  # the collector logs it, once


def test_a_store_from_a_newer_release_stops_scoring_for_good(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, pg_url: str
) -> None:
    store = PgResultsStore(pg_url)
    store.db.execute("INSERT INTO schema_version (version) VALUES (%s)", (SCHEMA_VERSION + 1,))
    store.close()
    report = run_scorer_process(monkeypatch, tmp_path, pg_url)
    assert report is not None
    assert "upgrade rampart-otel" in str(report["fatal"])


def test_a_connection_lost_mid_round_loses_nothing_and_scores_nothing_twice(
    tmp_path: Path, pg_url: str
) -> None:
    data, writer = data_dir_with_policy(tmp_path)
    writer.append_wait(encode_spans(make_traces(2, tool="delete_file")).SerializeToString(), 30)
    store = PgResultsStore(pg_url, instance="one")
    clock = Clock()
    scorer = scorer_on(store, data, clock)
    score_all(scorer, clock)
    assert scorer.stats.runs_scored == 2
    writer.append_wait(encode_spans(make_traces(3)).SerializeToString(), 30)
    writer.close()
    with psycopg.connect(pg_url, autocommit=True) as admin:  # the server drops the scorer
        admin.execute("SELECT pg_terminate_backend(%s)", (store.db.info.backend_pid,))
    with pytest.raises(psycopg.OperationalError):
        score_all(scorer, clock)
    clock = Clock()
    restarted = scorer_on(PgResultsStore(pg_url, instance="one"), data, clock)
    score_all(restarted, clock)
    assert restarted.stats.runs_scored == 3
    rows = statuses(PgResultsStore(pg_url))
    assert len({run for run, *_ in rows}) == 5
    assert all(revision == 0 for _, revision, *_ in rows)


def test_evaluation_runs_outside_the_writers_lock_and_a_race_is_decided_under_it(
    tmp_path: Path, pg_url: str
) -> None:
    # Collectors sharing a store take turns to write; while one evaluates (CPU, a judge's
    # network calls) the others must be able to commit. And a run another writer stored
    # while we evaluated it is decided again under the lock: the same spans never twice.
    data, writer = data_dir_with_policy(tmp_path)
    writer.append_wait(encode_spans(make_traces(2, tool="delete_file")).SerializeToString(), 30)
    writer.close()
    pipeline = make_evaluator([data / "policy.yaml"], [])
    score = pipeline.score
    raced: list[str] = []

    def score_while_others_write(run):  # type: ignore[no-untyped-def]
        scored = score(run)
        # lock_timeout: waiting on our lock (even to open the store) fails the test
        other = PgResultsStore(pg_url + "?options=-c%20lock_timeout%3D3000", instance="other")
        try:
            with other.transaction() as txn:
                txn.set_checkpoint(7, 7)
                if not raced:  # the first run: another collector stores it meanwhile
                    raced.append(run.run_id)
                    packed, digest = span_set(span.span_id for span in run.spans)
                    txn.add_run(run.run_id, 0, packed, digest, run.trace_ids, None, None)
                    for row in result_rows(scored.results, revision=0, scored_at=1.0):
                        txn.add_result(row)
        finally:
            other.close()
        return scored

    pipeline.score = score_while_others_write  # type: ignore[method-assign]
    store = PgResultsStore(pg_url, instance="one")
    clock = Clock()
    scorer = Scorer(data / "segments", store, pipeline, idle=5, max_wait=60, clock=clock)
    score_all(scorer, clock)
    runs = store.db.execute("SELECT run_id, revision FROM runs ORDER BY 1").fetchall()
    assert len(runs) == 2 and all(revision == 0 for _, revision in runs)  # none stored twice
    assert scorer.stats.runs_scored == 1 and scorer.stats.runs_skipped == 1
    assert raced and store.db.execute(
        "SELECT count(*) FROM results WHERE run_id = %s", (raced[0],)
    ).fetchone() == (2,)  # the other writer's two verdicts, not four
    store.close()


def score_beside_two_plain_traces(
    tmp_path: Path, pg_url: str, service_name: str
) -> tuple[str, dict[str, str | None]]:
    """One trace of ``service_name`` stored before two plain ones, all scored into the
    store: its run id, and every run's stored service."""
    data, writer = data_dir_with_policy(tmp_path)
    hostile = make_traces(1, tool="delete_file")
    for span in hostile:
        span._resource = Resource.create({"service.name": service_name})
    writer.append_wait(encode_spans([*hostile, *make_traces(2)]).SerializeToString(), 30)
    writer.close()
    clock = Clock()
    scorer = scorer_on(PgResultsStore(pg_url, instance="one"), data, clock)
    score_all(scorer, clock)
    assert scorer.stats.runs_scored == 3
    services = {r.run_id: r.service for r in PgResultsStore(pg_url).results()}
    assert sorted(map(str, services.values())).count("test-agent") == 2
    return f"{hostile[0].context.trace_id:032x}", services


def test_a_nul_in_a_service_name_is_stored_not_a_round_that_fails_forever(
    tmp_path: Path, pg_url: str
) -> None:
    """PostgreSQL text cannot hold NUL, which OTLP strings can. A hostile service.name made
    every write of its round fail, and the restarted scorer failed on the same round again:
    no verdict, for any trace, ever after. It is stored as U+FFFD instead."""
    run_id, services = score_beside_two_plain_traces(tmp_path, pg_url, "evil\x00agent")
    assert services[run_id] == "evil\ufffdagent"


def test_a_service_name_too_long_for_an_index_row_is_stored_not_a_round_that_fails_forever(
    tmp_path: Path, pg_url: str
) -> None:
    """An index row must fit about 2.7 KB; a hostile 20,000-character service.name failed its
    round at every restart. It is stored as its start and a digest of the whole."""
    rng = random.Random(5)
    name = "".join(rng.choice(string.ascii_letters) for _ in range(20_000))  # incompressible
    run_id, services = score_beside_two_plain_traces(tmp_path, pg_url, name)
    kept = services[run_id]
    assert kept is not None and kept.startswith(name[:200]) and len(kept) <= KEY_CHARS
    assert kept == stored_key(name)


@pytest.mark.slow
def test_postgresql_stopped_under_load_turns_healthz_503_in_one_line_and_loses_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The results store goes away while spans keep coming: /healthz says so (503, with the
    reason) within stall_seconds + 5 s, the log says so once (no traceback), ingest goes on,
    and when the server is back /healthz is 200 and every acknowledged span is scored."""
    import threading
    import time

    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import SpanExportResult
    from postgres import BINDIR, MISSING, fresh_database, stoppable_server

    from collector.harness import span_keys
    from collector.test_crash_recovery import health

    if BINDIR is None or not (BINDIR / "postgres").is_file():
        pytest.skip(MISSING)
    stall = 8
    with stoppable_server() as server, fresh_database(server.url) as url:
        write_config(tmp_path / "policy.yaml", POLICY)
        settings = write_config(
            tmp_path / "collector.yaml",
            f"policies: [policy.yaml]\nresults: {url}\nscoring:\n  stall_seconds: {stall}\n"
            "assembly:\n  idle_seconds: 0.5\n  max_wait_seconds: 5\n",
        )
        collector = spawn(tmp_path / "data", settings)
        acked: set[tuple[str, str]] = set()
        stop = threading.Event()

        def load() -> None:
            sender = OTLPSpanExporter(endpoint=collector.traces_url, timeout=30)
            while not stop.is_set():
                spans = make_traces(2)
                if sender.export(spans) is SpanExportResult.SUCCESS:
                    acked.update(span_keys(spans))
                stop.wait(0.2)

        sender = threading.Thread(target=load, daemon=True)
        sender.start()
        try:
            wait_for(lambda: collector.metrics()["rampart_otel_runs_scored_total"] >= 2, 90)
            assert health(collector) == (200, "ok")
            stopped = time.monotonic()
            server.stop()
            _, detail = wait_for(
                lambda: (h := health(collector))[0] == 503 and h, stall + 60, "healthz 503"
            )
            to_503 = time.monotonic() - stopped
            assert "results store unavailable" in detail, detail
            metrics = collector.metrics()
            assert metrics["rampart_otel_results_store_up"] == 0
            acked_in_outage = len(acked)
            wait_for(lambda: len(acked) > acked_in_outage, 30, "ingest to go on")
            restarted = time.monotonic()
            server.start()
            wait_for(lambda: health(collector)[0] == 200, 120, "healthz 200 again")
            to_200 = time.monotonic() - restarted
            stop.set()
            sender.join(60)
            expected = {trace for trace, _ in acked}

            def scored() -> set[bytes]:
                with psycopg.connect(url) as db:
                    rows = db.execute("SELECT trace_ids, span_ids FROM runs").fetchall()
                found: set[bytes] = set()
                for trace_ids, packed in rows:
                    assert json.loads(trace_ids)[0] in expected
                    found |= {bytes(packed[i : i + 8]) for i in range(0, len(packed), 8)}
                return found

            wait_for(
                lambda: {bytes.fromhex(span) for _, span in acked} <= scored(), 120, "all scored"
            )
            restarts = collector.metrics()["rampart_otel_scorer_restarts_total"]
        finally:
            stop.set()
            code = collector.terminate()
        output = collector.log.read_text()
        assert code == 0, output
        assert "Traceback" not in output, output
        assert output.count("results store unavailable") == 1, output
        assert "exited unexpectedly" not in output, output
        assert restarts >= 1
        with capsys.disabled():
            print(
                f"\n[figure] PostgreSQL stopped: /healthz 503 after {to_503:.1f}s "
                f"(stall_seconds {stall}); started again: 200 after {to_200:.1f}s; "
                f"{len(acked)} acknowledged spans, 0 lost; {restarts:.0f} scorer restarts"
            )


def test_scorer_shards_keep_their_points_in_postgresql_and_the_instances_is_the_least(
    tmp_path: Path, pg_url: str
) -> None:
    data, writer = data_dir_with_policy(tmp_path)
    open_trace = make_traces(1)
    open_trace[0]._end_time = None  # its root never ends: its shard's point stays before it
    writer.append_wait(encode_spans(open_trace).SerializeToString(), 30)
    writer.append_wait(encode_spans(make_traces(6)).SerializeToString(), 30)
    writer.close()
    clock = Clock()
    shards = [
        Scorer(
            data / "segments",
            PgResultsStore(pg_url, instance="sharded"),
            make_evaluator([data / "policy.yaml"], []),
            idle=5,
            max_wait=600,
            clock=clock,
            shard=index,
            shards=2,
        )
        for index in range(2)
    ]
    shards[0].step()
    other = PgResultsStore(pg_url, instance="other")  # another collector's rows stay apart
    with other.transaction() as txn:
        txn.set_checkpoint(7, 7)
    assert shards[0].store.checkpoint() is None  # shard 1 has not committed: not before it
    shards[1].step()
    clock.now += 100
    for shard in shards:
        shard.step()
    holder = shards[owner(f"{open_trace[0].context.trace_id:032x}", 2)]
    assert holder.checkpoint() == (1, 0) and holder.open_traces == 1
    store = PgResultsStore(pg_url, instance="sharded")
    assert store.checkpoint() == (1, 0)  # the least of the two shards' points
    rows = dict(store.db.execute("SELECT instance, segment FROM checkpoint").fetchall())
    assert set(rows) == {"sharded", "sharded [shard 0/2]", "sharded [shard 1/2]", "other"}
    store.clear_shard_checkpoints()
    rows = dict(store.db.execute("SELECT instance, segment FROM checkpoint").fetchall())
    assert set(rows) == {"sharded", "other"} and rows["other"] == 7
    assert len(statuses(store)) == 6 * 2  # the six complete traces, two checks each
    for shard in shards:
        shard.store.close()
    store.close()
    other.close()
