"""`rampart-otel replay`: recorded traces re-sent through the real OTLP exporters' transport
to a real OTLP endpoint on loopback (tests/otlp_sink.py), ids and timestamps intact;
partial success and refusals reported; the exporters' retries honoured; exit codes."""

from __future__ import annotations

import io
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from cli_runner import run_cli as run_rampart
from evaluation.judge_server import Reply, judge_server
from otlp_sink import Failure, RunningSink, Sink
from ports import closed_port

from rampart_otel.errors import ReplayError
from rampart_otel.receivers.files import read_path
from rampart_otel.replay import Pacer, replay

REPO = Path(__file__).resolve().parents[1]
TRACES = REPO / "samples" / "traces"
SAMPLE = TRACES / "pydantic-ai-httpx-transport.jsonl"  # 11 spans in 4 batches
PROTOCOLS = ("http/protobuf", "http/json", "grpc")


@pytest.fixture
def sink() -> Iterator[Sink]:
    running = RunningSink()
    try:
        yield running.sink
    finally:
        running.stop()


def target(sink: Sink, protocol: str) -> str:
    return sink.grpc_target if protocol == "grpc" else sink.http_url


def recorded() -> dict[tuple[str, str], tuple]:
    found = {}
    for batch in read_path(SAMPLE):
        assert isinstance(batch, list)
        for s in batch:
            found[s.trace_id, s.span_id] = (s.parent_span_id, s.name, s.start_ns, s.end_ns)
    return found


def run_cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return run_rampart("replay", *args, timeout=120)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_ids_timestamps_and_batches_arrive_as_recorded(sink: Sink, protocol: str) -> None:
    out = io.StringIO()
    code, stats = replay(
        [SAMPLE], target(sink, protocol), protocol, {"x-tenant": "t1"}, out, timeout=30
    )
    assert code == 0
    batches = [batch for batch in read_path(SAMPLE) if isinstance(batch, list)]
    assert stats.requests == len(batches) == len(sink.requests("traces"))
    assert stats.spans == 11 and stats.rejected == 0
    arrived = {
        (span.trace_id.hex(), span.span_id.hex()): (
            span.parent_span_id.hex() or None,
            span.name,
            span.start_time_unix_nano,
            span.end_time_unix_nano,
        )
        for _, _, span in sink.spans()
    }
    assert arrived == recorded()
    services = {
        kv.value.string_value
        for resource, _, _ in sink.spans()
        for kv in resource.attributes
        if kv.key == "service.name"
    }
    assert services == {"weather-agent"}
    assert all(r.headers.get("x-tenant") == "t1" for r in sink.requests("traces"))
    assert "11 spans in 4 requests" in out.getvalue() and "0 rejected" in out.getvalue()


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_partial_success_is_reported_and_fails_the_exit_code(sink: Sink, protocol: str) -> None:
    sink.partial = (1, "span 1 had no name")
    refusals: list[str] = []
    code, stats = replay(
        [SAMPLE], target(sink, protocol), protocol, {}, io.StringIO(), on_refused=refusals.append
    )
    assert code == 1
    assert stats.rejected == stats.requests == 4 and stats.failed_requests == 0
    assert len(refusals) == 4
    assert "1 of" in refusals[0] and "span 1 had no name" in refusals[0]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_exporters_retry_a_busy_endpoint(sink: Sink, protocol: str) -> None:
    sink.failures = [Failure(retry_after=0), Failure(retry_after=0)]
    code, stats = replay([SAMPLE], target(sink, protocol), protocol, {}, io.StringIO(), timeout=30)
    assert code == 0 and stats.rejected == 0
    assert len(sink.requests("traces")) == stats.requests + 2  # the first one, three times


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_refused_request_is_reported_and_the_rest_still_sent(sink: Sink, protocol: str) -> None:
    sink.failures = [Failure(http_status=400, grpc_code=grpc.StatusCode.INVALID_ARGUMENT)]
    refusals: list[str] = []
    code, stats = replay(
        [SAMPLE], target(sink, protocol), protocol, {}, io.StringIO(), on_refused=refusals.append
    )
    assert code == 1
    assert stats.failed_requests == 1 and stats.requests == 4
    first_batch = next(b for b in read_path(SAMPLE) if isinstance(b, list))
    assert stats.rejected == len(first_batch)
    assert len(refusals) == 1 and "refused" in refusals[0] and "scripted failure" in refusals[0]


def test_pacer_keeps_the_recorded_spacing_scaled_by_speed() -> None:
    now = [100.0]
    pacer = Pacer(speed=2.0, max_gap=60.0, clock=lambda: now[0])
    second = 1_000_000_000
    assert pacer.delay(10 * second) == 0.0  # the first batch goes at once
    assert pacer.delay(14 * second) == pytest.approx(2.0)  # 4 s recorded, at 2x
    now[0] += 0.5  # the send took time: the schedule does not drift
    assert pacer.delay(16 * second) == pytest.approx(2.5)
    assert pacer.delay(5 * second) == 0.0  # earlier than the last batch: at once, new clock
    assert pacer.delay(6 * second) == pytest.approx(0.5)


def test_pacer_cuts_long_gaps_and_without_speed_never_waits() -> None:
    now = [0.0]
    pacer = Pacer(speed=1.0, max_gap=3.0, clock=lambda: now[0])
    pacer.delay(0)
    assert pacer.delay(3600 * 10**9) == 3.0  # an hour's silence is cut to max_gap
    now[0] += 3.0  # slept it
    assert pacer.delay(3601 * 10**9) == pytest.approx(1.0)  # spacing resumes after the cut
    unpaced = Pacer(speed=None, max_gap=3.0, clock=lambda: now[0])
    assert unpaced.delay(0) == unpaced.delay(3600 * 10**9) == 0.0


def test_unreachable_endpoint_is_one_line_and_exit_2(tmp_path: Path) -> None:
    with closed_port() as port:  # nothing listens on it: connection refused
        for protocol in ("http/protobuf", "grpc"):
            proc = run_cli(SAMPLE, "--to", f"127.0.0.1:{port}", "--protocol", protocol)
            assert proc.returncode == 2, proc.stderr
            assert proc.stderr.count("\n") == 1 and "cannot connect" in proc.stderr, proc.stderr
            assert "Traceback" not in proc.stderr


def test_a_password_in_the_endpoint_url_is_never_printed(sink: Sink) -> None:
    # replay's lines end up in CI logs: a URL's user:password is shown as user:***.
    url = sink.http_url.replace("http://", "http://user:s3cretPassw0rd@")
    proc = run_cli(SAMPLE, "--to", url)
    assert proc.returncode == 0, proc.stderr
    assert "s3cret" not in proc.stdout + proc.stderr
    assert "user:***@" in proc.stdout
    with closed_port() as port:
        proc = run_cli(SAMPLE, "--to", f"http://user:s3cretPassw0rd@127.0.0.1:{port}")
    assert proc.returncode == 2 and "cannot connect" in proc.stderr
    assert "s3cret" not in proc.stdout + proc.stderr and "user:***@" in proc.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--to", "http://127.0.0.1:1", "--protocol", "thrift"), "--protocol"),
        (
            ("--to", "http://127.0.0.1:1", "--header", "x-a=a\r\nInjected: 1"),
            "--header 'x-a': a control character in its value, which a header cannot carry",
        ),
        (  # KEY: VALUE, as curl writes it: the name is shown, never the value (a token)
            ("--to", "http://127.0.0.1:1", "--header", "Authorization: Bearer sk-s3cret"),
            "--header 'Authorization': expected KEY=VALUE (the value is not shown)",
        ),
        (("--to", "ftp://example.com"), "--to"),
        (("--to", "http://127.0.0.1:1", "--header", "novalue"), "'novalue': expected KEY=VALUE"),
        (("--to", "http://127.0.0.1:1", "--speed", "0"), "--speed"),
    ],
)
def test_usage_errors_are_one_line_and_exit_2(args: tuple[str, ...], message: str) -> None:
    proc = run_cli(SAMPLE, *args)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and message in proc.stderr, proc.stderr


def test_cli_replays_over_http_and_reports(sink: Sink) -> None:
    proc = run_cli(TRACES, "--to", sink.http_url, "--header", "authorization=Bearer t=1")
    assert proc.returncode == 0, proc.stderr
    assert "0 rejected" in proc.stdout
    requests = sink.requests("traces")
    assert requests and all(r.headers["authorization"] == "Bearer t=1" for r in requests)


def test_unreadable_input_only_is_exit_2(sink: Sink, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n")
    with pytest.raises(ReplayError, match="no spans could be read"):
        replay([bad], sink.http_url, "http/protobuf", {}, io.StringIO())


def test_no_spans_at_all_is_exit_2_unless_allowed(sink: Sink, tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    proc = run_cli(empty, "--to", sink.http_url)
    assert proc.returncode == 2 and "no spans in the input" in proc.stderr, proc.stderr
    assert run_cli(empty, "--to", sink.http_url, "--allow-empty").returncode == 0
    assert sink.requests("traces") == []


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_lone_surrogate_in_recorded_text_is_sent_as_the_replacement_character(
    sink: Sink, protocol: str, tmp_path: Path
) -> None:
    # OTLP/JSON may escape one ("\ud800"); a protobuf string must be valid UTF-8.
    text = SAMPLE.read_text().replace('"weather-agent"', '"weather\\ud800agent"')
    odd = tmp_path / "odd.jsonl"
    odd.write_text(text)
    proc = run_cli(odd, "--to", target(sink, protocol), "--protocol", protocol)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    services = {
        kv.value.string_value
        for resource, _, _ in sink.spans()
        for kv in resource.attributes
        if kv.key == "service.name"
    }
    assert services == {"weather\ufffdagent"}


def test_a_redirect_is_not_delivered_and_nothing_goes_elsewhere() -> None:
    # Only a 2xx is delivery: the exporter alone counts a 307 as success.
    with judge_server(lambda body, n: Reply(), host="127.0.0.2") as elsewhere:
        moved = Reply(status=307, body=b"", headers={"Location": elsewhere.url})
        with judge_server(lambda body, n: moved) as server:
            proc = run_cli(SAMPLE, "--to", server.url, "--protocol", "http/json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "0 accepted, 11 rejected (4 requests failed)" in proc.stdout, proc.stdout
    assert f"HTTP 307 redirect to {elsewhere.url} (redirects are not followed)" in proc.stderr
    assert len(server.requests) == 4 and elsewhere.requests == []


def test_timeout_bounds_each_request_against_a_trickling_endpoint() -> None:
    def trickle() -> Iterator[bytes]:  # 20 bytes, one each 0.5 s: 10 s for the answer
        for _ in range(20):
            yield b" "
            time.sleep(0.5)

    with judge_server(lambda body, n: Reply(stream=trickle, length=20)) as server:
        started = time.monotonic()
        proc = run_cli(SAMPLE, "--to", server.url, "--protocol", "http/json", "--timeout", "3")
        seconds = time.monotonic() - started
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "0 accepted, 11 rejected (4 requests failed)" in proc.stdout, proc.stdout
    assert "no whole answer within the timeout of 3 s, retries included" in proc.stderr
    # 4 requests of at most 3 s each, and the command's start; 40 s without the bound
    assert seconds < 4 * 3 + 5, seconds
    print(f"\nreplay --timeout 3, 4 requests to a trickling endpoint: {seconds:.1f} s")
