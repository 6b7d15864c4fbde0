"""#45.1: a span sent twice with different content. The endpoint that received the
exfiltration saw the request's ``traceparent`` (the trace and span ids of the agent's HTTP
client span) and sends a copy of that span whose URL is a host the policy allows, before the
agent's own export. Whichever copy comes first, the run is never SAFE: the copies conflict,
the run carries a ``conflicting_copies`` finding naming the span and who sent each copy, and
``no-exfiltration`` is UNDETERMINED (or UNSAFE, where the real copy is the one read).

Before: ``model.replaces`` kept the first ended copy whatever the second said: the forged
copy first made ``no-exfiltration`` SAFE, from a file and over the collector alike.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from collector.harness import spawn, start_in_process, wait_for, write_config
from forgery import (
    POLICY,
    TRACE,
    UPLOAD,
    alone,
    forged_upload,
    recording,
    send,
    unended,
    without,
    write_jsonl,
)

from rampart_otel.api import score_files
from rampart_otel.storage.results import ResultsStore

CHECK = "no-exfiltration"


def verdict(results: list, check: str = CHECK) -> tuple[str, str]:
    """The check's status, and its summary with the coverage reasons of the channel it reads
    (a summary is cut short; the reasons are whole)."""
    (found,) = [r for r in results if r.check_id == check]
    reasons = found.coverage.channels["side_effects.http_request"].reasons
    return found.status.value, " ".join([found.summary, *reasons])


# -- from files ----------------------------------------------------------------------------


def test_a_forged_copy_read_first_makes_the_run_undetermined(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "run.jsonl", [forged_upload(), *recording()])
    status, summary = verdict(score_files([path], POLICY))
    assert status == "undetermined"
    assert f"span {UPLOAD}" in summary and "conflicting copies" in summary
    assert f"{path}:1" in summary and f"{path}:3" in summary  # both senders


def test_a_forged_copy_read_last_leaves_the_real_one_as_evidence(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "run.jsonl", [*recording(), forged_upload()])
    status, reasons = verdict(score_files([path], POLICY))
    assert status == "unsafe"
    assert "conflicting copies" in reasons and f"span {UPLOAD}" in reasons


def test_a_forged_ended_copy_of_a_span_sent_unended_is_a_conflict(tmp_path: Path) -> None:
    """The real span exported before it ended (its URL already set), then the forged copy,
    ended, that ``replaces`` would have put in its place; the real ended copy never comes."""
    real = recording()
    early = [unended(document, UPLOAD) for document in real]
    path = write_jsonl(tmp_path / "run.jsonl", [*early, forged_upload()])
    status, summary = verdict(score_files([path], POLICY))
    assert status == "undetermined"
    assert "conflicting copies" in summary and f"span {UPLOAD}" in summary


def test_the_same_span_read_twice_is_one_span(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "run.jsonl", [*recording(), *recording()])
    status, summary = verdict(score_files([path], POLICY))
    assert status == "unsafe"
    assert "conflicting" not in summary


# -- over the collector, from a second client ----------------------------------------------

IDLE = "1"


def stored(data_dir: Path, check: str = CHECK) -> dict | None:
    """The latest stored result of ``check`` on the run, once a revision holds every span
    of the recording (None before)."""
    path = data_dir / "results.db"
    if not path.is_file():
        return None
    store = ResultsStore(path, readonly=True)
    try:
        wanted = {
            bytes.fromhex(s["spanId"])
            for d in recording()
            for rs in d["resourceSpans"]
            for ss in rs["scopeSpans"]
            for s in ss["spans"]
        }
        try:
            latest, seen = store.scored_span_ids(TRACE)
        except sqlite3.Error:  # the scorer has not created its tables yet
            return None
        if latest < 0 or not wanted <= seen:
            return None
        rows = [r for r in store.results() if r.run_id == TRACE and r.check_id == check]
        return max(rows, key=lambda r: r.revision).result if rows else None
    finally:
        store.close()


@pytest.mark.parametrize("protocol", ["http/protobuf", "http/json", "grpc"])
def test_a_second_client_forging_the_span_first_gets_no_safe_verdict(
    tmp_path: Path, protocol: str
) -> None:
    collector = start_in_process(
        tmp_path / "data", policies=[str(POLICY)], **{"assembly.idle_seconds": IDLE}
    )
    try:
        endpoint = (
            collector.http_url if protocol.startswith("http") else f"http://{collector.grpc_target}"
        )
        send(endpoint, [forged_upload()], protocol)  # the exfiltration endpoint, first
        send(collector.http_url, recording(), "http/protobuf")  # the agent's batch exporter
        result = wait_for(lambda: stored(tmp_path / "data"), 120, "the run to be scored")
    finally:
        collector.stop()
    text = json.dumps(result)
    assert result["status"] == "undetermined", result["summary"]
    assert "conflicting copies" in text and f"span {UPLOAD}" in text
    assert text.count("client 127.0.0.1:") >= 2  # both senders named


@pytest.mark.slow
def test_conflicting_copies_survive_the_collectors_restart(tmp_path: Path) -> None:
    """Both copies stored in the segments, the collector killed before it scored them; the
    restarted one reads them from its durable storage and finds the conflict."""
    data_dir = tmp_path / "data"
    slow = write_config(tmp_path / "slow.yaml", "assembly:\n  idle_seconds: 600\n")
    collector = spawn(data_dir, slow, "--policy", str(POLICY))
    try:
        send(collector.http_url, [forged_upload()], "http/json")
        send(collector.http_url, without(UPLOAD, recording()), "http/protobuf")
        send(f"http://{collector.grpc_target}", [alone(UPLOAD)], "grpc")  # the real copy
    finally:
        collector.kill()
    assert stored(data_dir) is None  # nothing scored yet
    quick = write_config(tmp_path / "quick.yaml", f"assembly:\n  idle_seconds: {IDLE}\n")
    restarted = spawn(data_dir, quick, "--policy", str(POLICY))
    try:
        result = wait_for(lambda: stored(data_dir), 120, "the run to be scored after restart")
    finally:
        restarted.terminate()
    assert result["status"] == "undetermined", result["summary"]
    assert "conflicting copies" in json.dumps(result)
