"""Sustained ingest of ``rampart-otel collect`` with durable acknowledgement, and its loss.

Several client processes each drive the REAL OTLP/HTTP exporter
(``OTLPSpanExporter.export()``, opentelemetry-exporter-otlp-proto-http) with pre-built
ReadableSpans, so SDK span creation is not measured but the exporter's own encoding and
HTTP are. Every round starts a fresh collector (a subprocess, fsync on), runs the clients
for a fixed time, stops the collector with SIGTERM, then reads its segments back:

- spans/s: spans acknowledged (export returned SUCCESS) per second of the window;
- loss: acknowledged spans missing from the segments (must be 0);
- collector CPU: CPU seconds the collector (and scorer) used per 10k spans, which says
  what the collector alone would sustain with the clients on other machines;
- with ``--policy``: scored spans/s, spans in the runs scored and stored by the end of the
  window per second of it (``rampart_otel_spans_scored_total`` on the collector's
  ``/metrics``, polled each second; spans read but waiting in open traces do not count),
  and the backlog at the end: acknowledged spans not yet scored, in spans and in seconds
  of input at the acknowledged rate, and the backlog (received, not yet scored) every few
  seconds of the window. ``--drain`` then waits for the backlog to clear and
  reports how long that took;
- offered (spans the clients tried to send, first attempts, paced by ``--rate``), acked,
  scored, refused (spans and requests pushed back because scoring was behind:
  ``scoring.max_backlog_seconds``) and the collector's own backlog figures
  (``rampart_otel_scoring_backlog_seconds``: age of the oldest unread record;
  ``..._backlog_bytes``), at the end of the load and, with ``--drain``, after it.
  ``--scorers N`` and ``--max-backlog S`` set ``scoring.workers`` and
  ``scoring.max_backlog_seconds`` (default: the collector's). The load generator runs on
  the same machine: its CPU is the collector's loss.

Medians over the rounds are reported. Run: ``python bench/bench_collector.py``
(``--help`` for options; ``--policy FILE`` scores live during the run as well).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ANNOUNCE = re.compile(r"http://([\d.]+):(\d+)/v1/traces")


def build_batches(seed: int, count: int, size: int, spans_per_trace: int) -> list[list]:
    """Agent-like spans (a root and tool calls with GenAI attributes), built before timing."""
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope
    from opentelemetry.trace import SpanContext, SpanKind, TraceFlags

    rng = random.Random(seed)
    resource = Resource.create({"service.name": "bench-agent", "service.version": "1.0"})
    scope = InstrumentationScope("bench", "1.0")
    now = time.time_ns()
    batches = []
    for _ in range(count):
        batch = []
        while len(batch) < size:
            trace_id = rng.getrandbits(128) | 1
            root_id = rng.getrandbits(64) | 1
            root = SpanContext(trace_id, root_id, False, TraceFlags(1))
            for index in range(spans_per_trace):
                span_id = root_id if index == 0 else rng.getrandbits(64) | 1
                attributes = (
                    {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "bench"}
                    if index == 0
                    else {
                        "gen_ai.operation.name": "execute_tool",
                        "gen_ai.tool.name": "search",
                        "gen_ai.tool.call.id": f"call_{index}",
                        "gen_ai.tool.call.arguments": '{"query": "weather in Paris"}',
                    }
                )
                batch.append(
                    ReadableSpan(
                        name="invoke_agent bench" if index == 0 else "execute_tool search",
                        context=SpanContext(trace_id, span_id, False, TraceFlags(1)),
                        parent=None if index == 0 else root,
                        resource=resource,
                        attributes=attributes,
                        kind=SpanKind.INTERNAL,
                        start_time=now,
                        end_time=now + 1_000_000 * (index + 1),
                        instrumentation_scope=scope,
                    )
                )
        batches.append(batch[:size])
    return batches


def client(
    worker: int, round_no: int, url: str, args: argparse.Namespace, go: object, out: object
) -> None:
    import logging

    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import SpanExportResult

    logging.getLogger("opentelemetry").setLevel(logging.CRITICAL)
    exporter = OTLPSpanExporter(endpoint=url, timeout=30)
    if args.samples:  # encoded up front; each send under fresh trace ids
        encoded, trace_ids, sizes = sample_requests(args.batch)
        batches: list[list] = [[None] * size for size in sizes]  # only their lengths are read
    else:
        batches = build_batches(round_no * 1000 + worker, args.batches, args.batch, 8)
    if not args.samples and args.pre_encoded:  # the exporter's HTTP client, encoded up front
        from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

        encoded = [encode_spans(batch).SerializePartialToString() for batch in batches]
        trace_ids = [
            list(dict.fromkeys(span.context.trace_id.to_bytes(16, "big") for span in batch))
            for batch in batches
        ]
    if args.samples or args.pre_encoded:

        def send(batch_no: int, index: int) -> bool:
            payload = encoded[batch_no]
            if args.unique_traces or args.samples:
                for j, old in enumerate(trace_ids[batch_no]):
                    payload = payload.replace(old, fresh_trace_id(worker, round_no, index, j))
            return exporter._client.export(payload).success

    else:

        def send(batch_no: int, index: int) -> bool:
            return exporter.export(batches[batch_no]) is SpanExportResult.SUCCESS

    go.wait()  # type: ignore[attr-defined]
    started = time.monotonic()
    deadline = started + args.seconds
    per_client = args.rate / args.workers if args.rate else 0.0
    acked = failed = offered = 0
    acked_batches: set[int] = set()
    acked_sends: list[int] = []
    index = 0
    while (now := time.monotonic()) < deadline:
        if per_client and offered + args.batch > per_client * (now - started):
            time.sleep(min(args.batch / per_client, deadline - now, 0.05))
            continue
        batch_no = index % len(batches)
        offered += len(batches[batch_no])
        if send(batch_no, index):
            acked += len(batches[batch_no])
            acked_batches.add(batch_no)
            acked_sends.append(index)
        else:
            failed += 1
        index += 1
    finished = time.monotonic()
    if args.unique_traces or args.samples:  # each send its own traces: those acknowledged
        keys = {
            int.from_bytes(fresh_trace_id(worker, round_no, sent, j), "big")
            for sent in acked_sends
            for j in range(len(trace_ids[sent % len(batches)]))
        }
    else:
        keys = {
            (span.context.trace_id << 64) | span.context.span_id
            for batch_no in acked_batches
            for span in batches[batch_no]
        }
    out.put((acked, failed, finished, keys, offered))  # type: ignore[attr-defined]


def sample_requests(size: int) -> tuple[list[bytes], list[list[bytes]], list[int]]:
    """Every recorded sample (``samples/traces/**/*.jsonl``, each framework's) as OTLP
    protobuf requests of about ``size`` spans, with the trace ids each holds and its span
    count: production-shaped traffic (a few services, agents with tools, fragments) that
    each send replicates under fresh trace ids, timestamps and services as recorded."""
    from rampart_otel.codecs.otlp_json import spans_from_json_bytes
    from rampart_otel.codecs.otlp_proto import spans_to_proto_request

    root = Path(__file__).resolve().parent.parent / "samples" / "traces"
    spans = [
        span
        for path in sorted(root.rglob("*.jsonl"))
        for line in path.read_bytes().splitlines()
        if line.strip()
        for span in spans_from_json_bytes(line)
    ]
    encoded, trace_ids, sizes = [], [], []
    for start in range(0, len(spans), size):
        chunk = spans[start : start + size]
        encoded.append(spans_to_proto_request(chunk).SerializeToString())
        trace_ids.append(list(dict.fromkeys(bytes.fromhex(s.trace_id) for s in chunk)))
        sizes.append(len(chunk))
    return encoded, trace_ids, sizes


def fresh_trace_id(worker: int, round_no: int, send: int, index: int) -> bytes:
    """A trace id no other send uses: every batch scored as new traffic, not a replay.
    Never all zeros (an invalid trace id, which the collector rightly refuses)."""
    return (
        b"\x01"
        + worker.to_bytes(1, "big")
        + round_no.to_bytes(2, "big")
        + send.to_bytes(8, "big")
        + index.to_bytes(4, "big")
    )


def cpu_seconds(pid: int) -> float:
    """user + system CPU of a process and its children that have exited or still run."""
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    for candidate in [pid, *_children(pid)]:
        try:
            fields = Path(f"/proc/{candidate}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick
    return total


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(child) for child in text.split()]


def stored(data_dir: Path, by_trace: bool = False) -> tuple[int, set[int]]:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    from rampart_otel.storage.segments import list_segments, read_records

    count = 0
    keys: set[int] = set()
    for _, path in list_segments(data_dir / "segments"):
        for _, _, payload in read_records(path):
            request = ExportTraceServiceRequest.FromString(payload)
            for rs in request.resource_spans:
                for ss in rs.scope_spans:
                    count += len(ss.spans)
                    if by_trace:
                        keys.update(int.from_bytes(s.trace_id, "big") for s in ss.spans)
                        continue
                    keys.update(
                        (int.from_bytes(s.trace_id, "big") << 64) | int.from_bytes(s.span_id, "big")
                        for s in ss.spans
                    )
    return count, keys


def one_round(round_no: int, args: argparse.Namespace, workdir: Path) -> dict[str, float]:
    data_dir = workdir / f"round-{round_no}"
    command = [
        sys.executable, "-m", "rampart_otel.cli", "collect",
        "--http", "127.0.0.1:0", "--grpc", "off", "--data-dir", str(data_dir),
    ]  # fmt: skip
    for policy in args.policy:
        command += ["--policy", policy]
    sections = {
        "scoring": {"workers": args.scorers, "max_backlog_seconds": args.max_backlog},
        "assembly": {"idle_seconds": args.idle},
    }
    given = {
        name: {key: value for key, value in keys.items() if value is not None}
        for name, keys in sections.items()
    }
    if any(given.values()):
        settings = workdir / f"round-{round_no}.yaml"
        settings.write_text(json.dumps({k: v for k, v in given.items() if v}))  # JSON is YAML
        command += ["--config", str(settings)]
    log = (workdir / f"round-{round_no}.log").open("w")
    collector = subprocess.Popen(command, stdout=log, stderr=log, text=True)
    deadline = time.monotonic() + 60
    while not (match := ANNOUNCE.search((workdir / f"round-{round_no}.log").read_text())):
        if time.monotonic() > deadline or collector.poll() is not None:
            raise SystemExit(f"collector did not start; see {log.name}")
        time.sleep(0.05)
    url = f"http://{match[1]}:{match[2]}/v1/traces"
    context = multiprocessing.get_context("spawn")
    go, out = context.Event(), context.Queue()
    workers = [
        context.Process(target=client, args=(w, round_no, url, args, go, out))
        for w in range(args.workers)
    ]
    for worker in workers:
        worker.start()
    time.sleep(args.warmup)  # clients build their spans before the clock starts
    metrics_url = url.replace("/v1/traces", "/metrics")
    scored_before = scored_spans(metrics_url) if args.policy else 0
    cpu_before = cpu_seconds(collector.pid)
    started = time.monotonic()
    go.set()
    samples: list[tuple[float, float, float]] = []  # (t, received, scored)
    polling = threading.Event()
    if args.policy:
        poller = threading.Thread(
            target=_poll, args=(metrics_url, started, samples, polling), daemon=True
        )
        poller.start()
    results = [out.get(timeout=args.seconds + 120) for _ in workers]
    ended = max(result[2] for result in results)
    cpu_used = cpu_seconds(collector.pid) - cpu_before
    polling.set()
    scoring: dict[str, float] = {}
    if args.policy:
        acked_now = sum(result[0] for result in results)
        scored_at_end = scored_spans(metrics_url) - scored_before
        window = ended - started
        backlog = max(acked_now - scored_at_end, 0)
        scoring = {
            "scored_at_end": scored_at_end,
            "scored_spans_per_s": scored_at_end / window,
            "backlog_spans_at_end": backlog,
            "backlog_seconds_of_input": backlog / max(acked_now / window, 1e-9),
        } | {f"{key}_at_end": value for key, value in backlog_figures(metrics_url).items()}
        if args.drain:
            drain_start = time.monotonic()
            while scored_spans(metrics_url) - scored_before < acked_now:
                if time.monotonic() - drain_start > args.drain:
                    break
                time.sleep(0.5)
            scoring["drain_seconds"] = time.monotonic() - drain_start
            scored_after = scored_spans(metrics_url) - scored_before
            scoring["scored_after_drain"] = scored_after
            scoring["backlog_spans_after_drain"] = max(acked_now - scored_after, 0)
            scoring |= {
                f"{key}_after_drain": value for key, value in backlog_figures(metrics_url).items()
            }
        # The backlog over time: spans received (acknowledged or about to be) not yet scored.
        for at, received, scored in samples[:: max(len(samples) // 12, 1)]:
            print(
                f"  t={at:5.1f}s scored spans {scored - scored_before:>10,.0f}"
                f"   backlog {received - scored:>10,.0f} spans"
            )
    scored_final = scored_spans(metrics_url) - scored_before if args.policy else 0
    for worker in workers:
        worker.join(30)
    collector.send_signal(signal.SIGTERM)
    code = collector.wait(120)
    acked = sum(result[0] for result in results)
    failed = sum(result[1] for result in results)
    offered = sum(result[4] for result in results)
    acked_keys = set().union(*(result[3] for result in results))
    stored_count, stored_keys = stored(data_dir, by_trace=args.unique_traces or args.samples)
    missing_keys = acked_keys - stored_keys
    missing = len(missing_keys)
    for key in sorted(missing_keys)[:5]:
        print(f"  acknowledged but not stored: {key:032x}", file=sys.stderr)
    if args.policy:  # disk to size for: segments are trimmed by retention, verdicts never
        verdict_bytes = sum(p.stat().st_size for p in data_dir.glob("results.db*"))
        segment_bytes = sum(p.stat().st_size for p in (data_dir / "segments").iterdir())
        scoring["results_db_bytes_per_scored_span"] = verdict_bytes / max(scored_final, 1)
        scoring["segment_bytes_per_span"] = segment_bytes / max(stored_count, 1)
    return {
        "spans_per_s": acked / (ended - started),
        "offered": offered,
        "acked": acked,
        "stored": stored_count,
        "missing_acked": missing,
        "failed_exports": failed,
        "collector_cpu_s_per_10k_spans": 10_000 * cpu_used / max(acked, 1),
        "collector_exit": code,
    } | scoring


BACKLOG_FIGURES = {
    "rampart_otel_scoring_backlog_seconds": "backlog_seconds",
    "rampart_otel_scoring_backlog_bytes": "backlog_bytes",
    "rampart_otel_requests_pushed_back_total": "refused_requests",
}


def backlog_figures(metrics_url: str) -> dict[str, float]:
    """The collector's backlog (age of the oldest unread record, bytes) and the requests
    and spans it pushed back, from /metrics."""
    figures = {"refused_spans": 0.0}
    with urllib.request.urlopen(metrics_url, timeout=5) as response:
        for line in response.read().decode().splitlines():
            name, _, value = line.rpartition(" ")
            if name in BACKLOG_FIGURES:
                figures[BACKLOG_FIGURES[name]] = float(value)
            elif name.startswith("rampart_otel_spans_rejected_total{") and "backlog" in name:
                figures["refused_spans"] += float(value)
    return figures


def scored_spans(metrics_url: str) -> float:
    """Spans in the runs the scorer has scored and stored (the collector's own counter)."""
    return span_counters(metrics_url)[1]


def span_counters(metrics_url: str) -> tuple[float, float]:
    """(spans received over every transport, spans scored and stored), from /metrics."""
    received = scored = 0.0
    with urllib.request.urlopen(metrics_url, timeout=5) as response:
        for line in response.read().decode().splitlines():
            if line.startswith("rampart_otel_spans_received_total{"):
                received += float(line.split()[-1])
            elif line.startswith("rampart_otel_spans_scored_total "):
                scored = float(line.split()[1])
    return received, scored


def _poll(
    metrics_url: str,
    started: float,
    samples: list[tuple[float, float, float]],
    stop: threading.Event,
) -> None:
    while not stop.wait(1.0):
        try:
            samples.append((time.monotonic() - started, *span_counters(metrics_url)))
        except OSError:
            return


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=4, help="client processes")
    parser.add_argument("--batch", type=int, default=512, help="spans per export")
    parser.add_argument("--batches", type=int, default=64, help="distinct batches per client")
    parser.add_argument("--seconds", type=float, default=10.0, help="measured window per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warmup", type=float, default=8.0, help="seconds to build spans")
    parser.add_argument("--policy", action="append", default=[], help="score live as well")
    parser.add_argument("--keep", action="store_true", help="keep the data directories")
    parser.add_argument(
        "--rate", type=float, default=0.0, help="offered load, spans/s over all clients"
    )
    parser.add_argument(
        "--unique-traces",
        action="store_true",
        help="with --pre-encoded: fresh trace ids in every send (scored as new traffic, "
        "not skipped as a replay of spans already scored)",
    )
    parser.add_argument(
        "--drain", type=float, default=0.0, help="with --policy: wait up to S for the backlog"
    )
    parser.add_argument("--scorers", type=int, help="scoring.workers (default: one per core)")
    parser.add_argument(
        "--max-backlog", type=float, help="scoring.max_backlog_seconds (default: the collector's)"
    )
    parser.add_argument(
        "--idle",
        type=float,
        help="assembly.idle_seconds (default 5: a complete trace waits that long for late "
        "spans before it is scored, so acked - scored holds that many seconds of input)",
    )
    parser.add_argument(
        "--samples",
        action="store_true",
        help="send the recorded samples (every framework's, 1,952 spans) replicated under fresh "
        "trace ids in every send, pre-encoded: production-shaped traffic of a few services, "
        "rather than the synthetic 8-span traces",
    )
    parser.add_argument(
        "--pre-encoded",
        action="store_true",
        help="encode batches before timing and send them with the exporter's HTTP client: "
        "measures the collector rather than the clients' protobuf encoding",
    )
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="rampart-bench-"))
    rounds = []
    for round_no in range(args.rounds):
        result = one_round(round_no, args, workdir)
        rounds.append(result)
        print(f"round {round_no + 1}: " + json.dumps({k: round(v, 3) for k, v in result.items()}))
        if not args.keep:
            subprocess.run(["rm", "-rf", str(workdir / f"round-{round_no}")], check=False)
    summary = {
        "spans_per_s_median": statistics.median(r["spans_per_s"] for r in rounds),
        **(
            {
                "scored_spans_per_s_median": statistics.median(
                    r["scored_spans_per_s"] for r in rounds
                ),
                "backlog_seconds_median": statistics.median(
                    r["backlog_seconds_of_input"] for r in rounds
                ),
            }
            if args.policy
            else {}
        ),
        "offered_median": statistics.median(r["offered"] for r in rounds),
        "acked_median": statistics.median(r["acked"] for r in rounds),
        **(
            {
                "refused_spans_at_end_median": statistics.median(
                    r["refused_spans_at_end"] for r in rounds
                ),
                "backlog_seconds_at_end_median": statistics.median(
                    r["backlog_seconds_at_end"] for r in rounds
                ),
                "backlog_spans_at_end_median": statistics.median(
                    r["backlog_spans_at_end"] for r in rounds
                ),
            }
            if args.policy
            else {}
        ),
        "loss_total": sum(r["missing_acked"] for r in rounds),
        "collector_cpu_s_per_10k_spans_median": statistics.median(
            r["collector_cpu_s_per_10k_spans"] for r in rounds
        ),
        "workers": args.workers,
        "batch": args.batch,
        "seconds": args.seconds,
        "rounds": args.rounds,
        "cores": os.cpu_count(),
        "http": _http_impl(),
        "clients": "samples, pre-encoded"
        if args.samples
        else "pre-encoded"
        if args.pre_encoded
        else "OTLPSpanExporter.export()",
    }
    print(json.dumps(summary, indent=2))


def _http_impl() -> str:
    from rampart_otel.collector.service import _http_protocol

    protocol = _http_protocol(10.0)
    return protocol if isinstance(protocol, str) else "httptools"


if __name__ == "__main__":
    main()
