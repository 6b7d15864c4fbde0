"""What a store answers is not trusted: hostile answers from a stand-in store on 127.0.0.1.

A real Phoenix or MLflow cannot be made to repeat a cursor, answer a page of the wrong types,
redirect, trickle or send a page without end, so these tests serve such answers from
``tests/store_standin.py``, in the shapes of the stores' documented REST APIs (Phoenix
``GET /v1/projects/{p}/traces`` and ``/spans``: ``{"data": [...], "next_cursor": ...}``;
MLflow ``POST /api/3.0/mlflow/traces/search`` and ``GET .../traces/batchGet``, spans in OTLP
protobuf-JSON). What a real server answers is tested in ``test_phoenix.py``/``test_mlflow.py``.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from cli_runner import run_cli
from store_standin import json_answer, standin

from rampart_otel.receivers.stores import TraceStoreError, read_sources
from rampart_otel.receivers.stores import http as store_http

SAMPLES = Path(__file__).resolve().parents[3] / "samples"
POLICY = SAMPLES / "policy.yaml"
EXFIL = SAMPLES / "traces/openinference-exfil.jsonl"
TRACE = "0123456789abcdef0123456789abcdef"


def _read(url: str) -> tuple[list[Any], list[str]]:
    """(spans, input errors' messages) of a store URL."""
    spans: list[Any] = []
    errors: list[str] = []
    for item in read_sources([url]):
        if isinstance(item, list):
            spans.extend(item)
        else:
            errors.append(item.message)
    return spans, errors


def _phoenix_span(**fields: Any) -> dict[str, Any]:
    span = {
        "context": {"trace_id": TRACE, "span_id": "0123456789abcdef"},
        "parent_id": None,
        "name": "agent",
        "start_time": "2026-12-01T00:00:00+00:00",
        "end_time": "2026-12-01T00:00:01+00:00",
        "attributes": {"openinference.span.kind": "AGENT"},
        "events": [],
    }
    return {**span, **fields}


def _phoenix(spans: list[Any], traces_cursor: str | None = None, spans_cursor: str | None = None):
    return {
        "/traces": lambda *_: json_answer(
            {"data": [{"trace_id": TRACE}], "next_cursor": traces_cursor}
        ),
        "/spans": lambda *_: json_answer({"data": spans, "next_cursor": spans_cursor}),
    }


# -- pagination ------------------------------------------------------------------------------


@pytest.mark.parametrize("which", ["traces", "spans"])
def test_a_phoenix_cursor_that_repeats_stops_the_read(which: str) -> None:
    routes = _phoenix([_phoenix_span()], **{f"{which}_cursor": "again"})
    with standin(routes) as (address, asked), pytest.raises(TraceStoreError) as raised:
        _read(f"phoenix://{address}/default")
    assert "already given" in str(raised.value) and len(asked) < 10


def test_new_cursors_to_empty_pages_without_end_stop_the_read() -> None:
    pages = iter(range(10**9))
    routes = {
        "/traces/search": lambda *_: json_answer(
            {"traces": [], "next_page_token": f"page-{next(pages)}"}
        ),
    }
    with standin(routes) as (address, asked), pytest.raises(TraceStoreError) as raised:
        _read(f"mlflow://{address}/1")
    assert "empty pages in a row" in str(raised.value) and len(asked) <= 20


def test_the_same_phoenix_traces_under_ever_new_cursors_stop_the_read() -> None:
    # Each page lists the trace already read, with a new cursor: a page of nothing new.
    pages = iter(range(10**9))
    spans_asked = []
    routes = {
        "/traces": lambda *_: json_answer(
            {"data": [{"trace_id": TRACE}], "next_cursor": f"page-{next(pages)}"}
        ),
        "/spans": lambda _m, query, _b: (
            spans_asked.append(query["trace_id"]) or json_answer({"data": [_phoenix_span()]})
        ),
    }
    with standin(routes) as (address, asked), pytest.raises(TraceStoreError) as raised:
        _read(f"phoenix://{address}/default")
    assert "empty pages in a row" in str(raised.value) and len(asked) <= 20
    assert spans_asked == [[TRACE]]  # the trace's spans are read once


def test_the_same_phoenix_spans_under_ever_new_cursors_stop_the_read() -> None:
    pages = iter(range(10**9))
    routes = {
        "/traces": lambda *_: json_answer({"data": [{"trace_id": TRACE}], "next_cursor": None}),
        "/spans": lambda *_: json_answer(
            {"data": [_phoenix_span()], "next_cursor": f"page-{next(pages)}"}
        ),
    }
    with standin(routes) as (address, asked), pytest.raises(TraceStoreError) as raised:
        _read(f"phoenix://{address}/default")
    assert "empty pages in a row" in str(raised.value) and len(asked) <= 20


def test_the_same_mlflow_traces_under_ever_new_page_tokens_stop_the_read() -> None:
    pages = iter(range(10**9))
    fetched = []
    routes = {
        "/traces/search": lambda *_: json_answer(
            {"traces": [{"trace_id": f"tr-{TRACE}"}], "next_page_token": f"page-{next(pages)}"}
        ),
        "/traces/batchGet": lambda _m, query, _b: (
            fetched.append(query["trace_ids"]) or json_answer({"traces": []})
        ),
    }
    with standin(routes) as (address, asked), pytest.raises(TraceStoreError) as raised:
        _read(f"mlflow://{address}/1")
    assert "empty pages in a row" in str(raised.value) and len(asked) <= 25
    assert fetched == [[f"tr-{TRACE}"]]


def test_a_page_with_one_new_trace_among_those_read_is_not_empty() -> None:
    # Pages overlapping by one trace (a store paging by time, with a trace on the boundary)
    # are read to the end, each trace once.
    traces = [f"{n:032x}" for n in range(1, 31)]
    fetched: list[list[str]] = []

    def listing(_m: str, query: dict, _b: Any) -> Any:
        start = int(query.get("cursor", ["0"])[0])
        page = traces[max(start - 1, 0) : start + 2]
        following = str(start + 2) if start + 2 < len(traces) else None
        return json_answer({"data": [{"trace_id": t} for t in page], "next_cursor": following})

    def spans(_m: str, query: dict, _b: Any) -> Any:
        fetched.append(query["trace_id"])
        return json_answer(
            {
                "data": [
                    _phoenix_span(context={"trace_id": t, "span_id": "0123456789abcdef"})
                    for t in query["trace_id"]
                ]
            }
        )

    with standin({"/traces": listing, "/spans": spans}) as (address, _):
        read, errors = _read(f"phoenix://{address}/default")
    assert errors == []
    assert sorted(span.trace_id for span in read) == traces
    assert sorted(t for ids in fetched for t in ids) == traces


def test_a_phoenix_cursor_that_is_not_text_is_one_line() -> None:
    with (
        standin(_phoenix([_phoenix_span()], traces_cursor={"a": 1})) as (address, _),  # type: ignore[arg-type]
        pytest.raises(TraceStoreError, match="not text"),
    ):
        _read(f"phoenix://{address}/default")


def test_an_mlflow_page_token_that_repeats_stops_the_read() -> None:
    routes = {
        "/traces/search": lambda *_: json_answer(
            {"traces": [{"trace_id": f"tr-{TRACE}"}], "next_page_token": "again"}
        ),
        "/traces/batchGet": lambda *_: json_answer({"traces": []}),
    }
    with standin(routes) as (address, asked), pytest.raises(TraceStoreError) as raised:
        _read(f"mlflow://{address}/1")
    assert "already given" in str(raised.value) and len(asked) < 10


# -- write-back ------------------------------------------------------------------------------


def test_score_annotate_with_a_store_refusing_writes_writes_the_report_and_names_what_it_lost(
    tmp_path: Path,
) -> None:
    # It exited 2 with no -o report (0 of 21 runs). Now: the report is written, every run
    # the store refuses is counted, and the exit code says not everything was written back.
    traces = [f"{n:032x}" for n in range(1, 22)]
    writes: list[str] = []

    def spans(_m: str, query: dict, _b: Any) -> Any:
        return json_answer(
            {
                "data": [
                    _phoenix_span(context={"trace_id": t, "span_id": "0123456789abcdef"})
                    for t in query["trace_id"]
                ]
            }
        )

    def refuse(method: str, _q: dict, _b: Any) -> Any:
        writes.append(method)
        return json_answer({"detail": "Service Unavailable"}, 503)

    routes = {
        "/traces": lambda *_: json_answer({"data": [{"trace_id": t} for t in traces]}),
        "/spans": spans,
        "/annotation_configs": refuse,
        "/trace_annotations": refuse,
    }
    report = tmp_path / "report.json"
    with standin(routes) as (address, _):
        done = run_cli(
            "score", f"phoenix://{address}/default", "--policy", POLICY, "--annotate",
            "--format", "json", "-o", report,
        )  # fmt: skip
    assert done.returncode == 2, done.stderr
    written = json.loads(report.read_text())
    assert len({r["run_id"] for r in written["results"]}) == 21
    assert len(written["results"]) == 126
    assert "annotated 0 verdicts on 0 runs in Phoenix" in done.stderr
    assert (
        "error: 126 verdicts on 21 runs were not written back to Phoenix; after 3 runs refused "
        "in a row the rest were not tried: " in done.stderr
    )
    assert "HTTP 503" in done.stderr and "Traceback" not in done.stderr
    assert len(writes) == 3  # a store that is down is not asked once per run


def test_score_follow_scores_new_traces_round_after_round_and_keeps_its_resume_point(
    tmp_path: Path,
) -> None:
    import signal
    import subprocess
    import sys

    listed: list[dict] = []
    annotated: list[str] = []

    def traces(_m: str, query: dict, _b: Any) -> Any:
        listed.append(query)
        first = "start_time" not in query  # the first round reads from the beginning
        return json_answer({"data": [{"trace_id": TRACE}] if first else []})

    def annotate(_m: str, _q: dict, body: Any) -> Any:
        annotated.extend(item["name"] for item in (body or {}).get("data", []))
        return json_answer({"data": []})

    routes = {
        "/traces": traces,
        "/spans": lambda *_: json_answer({"data": [_phoenix_span()]}),
        "/trace_annotations": annotate,
        "re:/annotation_configs": lambda *_: json_answer({"data": {}}),
    }
    state = tmp_path / "follow.json"
    with standin(routes) as (address, _):
        url = f"phoenix://{address}/default"
        process = subprocess.Popen(
            [sys.executable, "-m", "rampart_otel.cli", "score", url, "--policy", str(POLICY),
             "--follow", "--poll", "0.5", "--settle", "0", "--state", str(state), "--annotate"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        deadline = time.monotonic() + 120
        while len(listed) < 3 and time.monotonic() < deadline:
            time.sleep(0.2)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert f"following {url} (resume point: {state})" in err
    assert "stopped following" in err and "Traceback" not in err
    assert out.count("Traces, by the worst verdict") == 1  # the round with a run, only
    assert TRACE in out
    assert "rampart" in annotated  # written back as it was scored
    assert [("start_time" in q) for q in listed[:3]] == [False, True, True]
    saved = json.loads(state.read_text())
    assert saved["url"] == url and saved["schema"] == "rampart-otel/follow@1"


# -- transport -------------------------------------------------------------------------------


def test_a_redirect_is_refused_not_read_as_an_empty_store() -> None:
    routes = {"/traces": lambda *_: json_answer({"data": [], "next_cursor": None}, status=302)}
    with standin(routes) as (address, _), pytest.raises(TraceStoreError, match="redirect"):
        _read(f"phoenix://{address}/default")


def test_an_answer_over_the_cap_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_http, "MAX_ANSWER_BYTES", 1000)
    routes = _phoenix([_phoenix_span(name="x" * 5000)])
    with standin(routes) as (address, _), pytest.raises(TraceStoreError, match="larger than"):
        _read(f"phoenix://{address}/default")


@contextmanager
def _trickler() -> Iterator[int]:
    """A server that answers headers, then one byte of body a second, without end."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    stop = threading.Event()

    def serve() -> None:
        conn, _ = server.accept()
        with conn:
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n")
            conn.sendall(b"transfer-encoding: chunked\r\n\r\n")
            while not stop.wait(0.2):
                try:
                    conn.sendall(b"1\r\n \r\n")
                except OSError:
                    return

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        server.close()


def test_a_trickled_answer_ends_by_the_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_http, "TIMEOUT", 1.5)
    started = time.monotonic()
    with _trickler() as port, pytest.raises(TraceStoreError, match="deadline"):
        _read(f"phoenix://127.0.0.1:{port}/default")
    assert time.monotonic() - started < 10


def test_tls_to_a_plain_port_is_one_line() -> None:
    with standin(_phoenix([])) as (address, _), pytest.raises(TraceStoreError) as raised:
        _read(f"phoenix+https://{address}/default")
    assert "\n" not in str(raised.value)


def test_an_error_body_with_terminal_escapes_is_shown_escaped() -> None:
    routes = {"/traces": lambda *_: (500, {}, b"boom \x1b[2J\x1b]0;owned\x07 done")}
    with standin(routes) as (address, _), pytest.raises(TraceStoreError) as raised:
        _read(f"phoenix://{address}/default")
    assert "HTTP 500" in str(raised.value)
    assert "\x1b" not in str(raised.value) and "\x07" not in str(raised.value)


# -- Phoenix spans the reader cannot read ----------------------------------------------------


@pytest.mark.parametrize(
    "bad",
    [
        "not an object",
        _phoenix_span(context="not an object"),
        _phoenix_span(attributes=[1, 2]),
        _phoenix_span(events=[{"name": "exception", "attributes": [1]}]),
        _phoenix_span(events=["an event that is not an object"]),
        _phoenix_span(context={"trace_id": TRACE, "span_id": "\x1b[31mnot hex"}),
        _phoenix_span(context={"trace_id": "\x1b[31mnot hex", "span_id": "fedcba9876543210"}),
    ],
    ids=["str", "context", "attributes", "event-attributes", "event", "span-id", "trace-id"],
)
def test_a_phoenix_span_that_cannot_be_read_leaves_its_trace_incomplete(bad: Any) -> None:
    child = _phoenix_span(
        context={"trace_id": TRACE, "span_id": "1111111111111111"}, parent_id="0123456789abcdef"
    )
    with standin(_phoenix([child, bad])) as (address, _):
        spans, errors = _read(f"phoenix://{address}/default")
    assert len(errors) == 1 and "refused" in errors[0] and "\x1b" not in errors[0]
    assert "as incomplete" in errors[0] and "in no run" not in errors[0]
    refused = [s for s in spans if s.refused]
    assert len(refused) == 1 and refused[0].trace_id == TRACE  # in the trace it came from
    assert [s.span_id for s in spans if not s.refused] == ["1111111111111111"]


# -- MLflow: a span the reader cannot read, in a run that would otherwise look SAFE ----------


def _mlflow_routes(spans: list[Any]) -> dict[str, Any]:
    trace = {"trace_info": {"trace_id": "tr-" + spans_trace_id()}, "spans": spans}
    return {
        "/traces/search": lambda *_: json_answer(
            {"traces": [{"trace_id": trace["trace_info"]["trace_id"]}]}
        ),
        "/traces/batchGet": lambda *_: json_answer({"traces": [trace]}),
    }


def _exfil_spans() -> list[dict[str, Any]]:
    spans = []
    for line in EXFIL.read_text().splitlines():
        for rs in json.loads(line)["resourceSpans"]:
            for ss in rs["scopeSpans"]:
                spans.extend(ss["spans"])
    return spans


def spans_trace_id() -> str:
    return str(_exfil_spans()[0]["traceId"]).lower()


def _statuses(url: str) -> dict[str, str]:
    """Each check's verdict, as ``score`` gives it (a subprocess: ``score_files`` refuses
    input with a span it could not read, which is the point here)."""
    done = run_cli("score", url, "--policy", POLICY, "--format", "json", timeout=120)
    assert done.returncode in (0, 1), done.stderr
    return {r["check"]: r["status"] for r in json.loads(done.stdout)["results"]}


@pytest.mark.slow  # two runs of the command
def test_mlflow_spans_that_are_not_objects_never_turn_unsafe_into_safe() -> None:
    spans = _exfil_spans()
    with standin(_mlflow_routes(spans)) as (address, _):
        whole = _statuses(f"mlflow://{address}/1")
    assert "unsafe" in whole.values()
    hidden = [
        "a span that is not an object" if s["name"] in ("send_report", "POST") else s for s in spans
    ]
    with standin(_mlflow_routes(hidden)) as (address, _):
        spans_read, errors = _read(f"mlflow://{address}/1")
        partial = _statuses(f"mlflow://{address}/1")
    assert len(errors) == 1 and "in no run" not in errors[0]
    assert sum(1 for s in spans_read if s.refused) == 2
    for check, status in whole.items():
        if status != "safe":
            assert partial[check] != "safe", check
    # the spans it could not read could have been a shell call: no-shell cannot stay SAFE
    safe = {check for check, status in whole.items() if status == "safe"}
    assert {check for check, status in partial.items() if status == "safe"} < safe


def test_mlflow_answers_of_the_wrong_shape_are_one_line() -> None:
    routes = {"/traces/search": lambda *_: json_answer({"traces": "not a list"})}
    with standin(routes) as (address, _), pytest.raises(TraceStoreError, match="'traces' list"):
        _read(f"mlflow://{address}/1")
    routes = {"/traces/search": lambda *_: json_answer({"traces": [{"trace_id": 7}]})}
    with standin(routes) as (address, _), pytest.raises(TraceStoreError, match="without an id"):
        _read(f"mlflow://{address}/1")
    trace = {"trace_info": [1], "spans": [{**_exfil_spans()[0], "attributes": [1]}]}
    routes = {
        "/traces/search": lambda *_: json_answer({"traces": [{"trace_id": "tr-1"}]}),
        "/traces/batchGet": lambda *_: json_answer({"traces": [trace]}),
    }
    with standin(routes) as (address, _):
        spans, errors = _read(f"mlflow://{address}/1")
    assert [s.refused for s in spans] == ["undecodable"] and len(errors) == 1


@pytest.mark.parametrize(
    ("routes", "message"),
    [
        ({}, "HTTP 404"),  # a server with no such API
        ({"/traces": lambda *_: (200, {"content-type": "text/html"}, b"<html>")}, "not JSON"),
        ({"/traces": lambda *_: json_answer({"data": "x"})}, "without a 'data' list"),
        ({"/traces": lambda *_: (200, {}, b"[" * 100_000)}, "not JSON"),  # nested too deeply
    ],
    ids=["404", "html", "data", "deep"],
)
def test_a_server_that_is_not_phoenix_is_one_line(routes: dict, message: str) -> None:
    with standin(routes) as (address, _), pytest.raises(TraceStoreError, match=message) as raised:
        _read(f"phoenix://{address}/default")
    assert "\n" not in str(raised.value)
