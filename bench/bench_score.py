"""``rampart-otel score`` on a large file, side by side with the floor: the fastest decoding.

The input replicates the recorded samples (``samples/traces/*.jsonl``, OTLP JSON Lines as
the Collector file exporter writes them) ``--runs`` times in total, each copy of a trace
under a fresh unique trace id (span ids stay as recorded: unique within each trace). With
``--proto`` the same spans are written in the file exporter's length-prefixed protobuf
form as well.

In one process, alternating for ``--rounds`` rounds, it times:

- floor: each record decoded by the fastest well-kept decoder (``orjson.loads`` per line;
  upb's ``ExportTraceServiceRequest.FromString`` per protobuf record), then every
  attribute of every resource, span and event touched (its key and its value read);
- score: :func:`rampart_otel.scoring.score`, what ``rampart-otel score --format json``
  runs (``--format terminal``: the default overview, which shows no coverage, so score
  reads only what the policy's checks need), the report written to ``/dev/null``, with
  ``--jobs 1`` and ``--jobs N``;

and reports spans/s for each, their medians and the median of the per-round ratio
score/floor (issue 13 asks for at least 0.5). With ``--stages`` it also times each prefix
of the one-process pipeline (read and decode; + assemble runs; + normalize; + evaluate the
policy; the whole ``score``) in CPU microseconds per span, beside the budget per span that
0.5x the floor leaves on this machine's cores: where the time goes, by the same functions
``score`` calls. Then, in child processes, the peak RSS of a full score of ``--rss-runs``
runs and of four times as many (1x and 4x the size): memory is bounded by the traces open
at once, not by the size of the file. Traces stay open until 50,000 spans have been read
after their last one (the assembler's idle window), so the 1x input should be larger than
that window (the default, 10,000 runs, is about 58,000 spans).

Run: ``python bench/bench_score.py`` (``--help`` for options).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples" / "traces"
POLICY = ROOT / "samples" / "policy.yaml"


# ---- input --------------------------------------------------------------------------


def load_samples(directory: Path) -> list[tuple[str, list[str]]]:
    """Each recorded trace: its trace id and the JSON Lines that carry it."""
    traces: dict[str, list[str]] = {}
    for path in sorted(directory.glob("*.jsonl")):
        for line in path.read_text().splitlines():
            if not line.strip():
                continue
            ids = {
                span["traceId"]
                for rs in json.loads(line)["resourceSpans"]
                for ss in rs["scopeSpans"]
                for span in ss["spans"]
            }
            if len(ids) != 1:
                raise SystemExit(f"{path}: expected one trace per line, found {len(ids)}")
            traces.setdefault(ids.pop(), []).append(line)
    return list(traces.items())


def fresh_trace_id(copy: int, index: int) -> str:
    return f"{copy + 1:016x}{index + 1:016x}"


def write_input(
    directory: Path, runs: int, proto: bool, name: str = "traces"
) -> tuple[Path, Path | None, int]:
    """``runs`` traces as JSON Lines, and as length-prefixed protobuf too with ``proto``."""
    samples = load_samples(SAMPLES)
    full = directory / f"{name}.jsonl"
    proto_path = directory / f"{name}.binpb" if proto else None
    records: list[tuple[str, str, bytes]] = []  # trace id, JSON line, length-prefixed proto
    if proto:
        from rampart_otel.codecs.otlp_json import spans_from_json_bytes
        from rampart_otel.codecs.otlp_proto import spans_to_proto_request

        for trace_id, lines in samples:
            for line in lines:
                payload = spans_to_proto_request(spans_from_json_bytes(line)).SerializeToString()
                records.append((trace_id, line, len(payload).to_bytes(4, "big") + payload))
    else:
        records = [(trace_id, line, b"") for trace_id, lines in samples for line in lines]
    indexes = {trace_id: i for i, (trace_id, _) in enumerate(samples)}
    spans = 0
    copies = -(-runs // len(samples))
    with (
        full.open("w") as out,
        proto_path.open("wb") if proto_path else open(os.devnull, "wb") as out_proto,
    ):
        for copy in range(copies):
            for trace_id, line, record in records:
                index = indexes[trace_id]
                if copy * len(samples) + index >= runs:
                    continue
                new_id = fresh_trace_id(copy, index)
                spans += line.count('"spanId"')
                text = line.replace(trace_id, new_id) + "\n"
                out.write(text)
                if proto_path:
                    old_raw, new_raw = bytes.fromhex(trace_id), bytes.fromhex(new_id)
                    out_proto.write(record.replace(old_raw, new_raw))
    return full, proto_path, spans


# ---- measurement ----------------------------------------------------------------------


def floor(path: Path) -> int:
    """The fastest decode of the same file, touching every attribute; the spans it holds."""
    import orjson
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    spans = 0
    with path.open("rb") as stream:
        if path.suffix == ".jsonl":
            for line in stream:
                for rs in orjson.loads(line)["resourceSpans"]:
                    _touch_json(rs.get("resource", {}).get("attributes", ()))
                    for ss in rs["scopeSpans"]:
                        for span in ss["spans"]:
                            spans += 1
                            _touch_json(span.get("attributes", ()))
                            for event in span.get("events", ()):
                                _touch_json(event.get("attributes", ()))
            return spans
        parse = ExportTraceServiceRequest.FromString
        while header := stream.read(4):
            request = parse(stream.read(int.from_bytes(header, "big")))
            for rs in request.resource_spans:
                _touch_proto(rs.resource.attributes)
                for ss in rs.scope_spans:
                    for span in ss.spans:
                        spans += 1
                        _touch_proto(span.attributes)
                        for event in span.events:
                            _touch_proto(event.attributes)
    return spans


def _touch_json(attributes: list[dict]) -> list[object]:
    touched = []
    for kv in attributes:
        touched.append(kv["key"])
        touched.extend(kv["value"].values())
    return touched


def _touch_proto(attributes: object) -> list[object]:
    touched = []
    for kv in attributes:  # type: ignore[attr-defined]
        touched.append(kv.key)
        value = kv.value
        which = value.WhichOneof("value")
        if which:
            touched.append(getattr(value, which))
    return touched


TARGET_1 = {"json": 0.25, "proto": 0.30}  # issue 34: -j1 per core; -jN >= 0.40 on both
FORMAT = "json"  # the report score writes (--format): json, or the terminal overview


def score(path: Path, policy_path: Path, jobs: int = 1) -> int:
    from rampart_otel.exporters.report_sinks import report_sink
    from rampart_otel.scoring import load_checked_policy
    from rampart_otel.scoring import score as run_score

    policy = load_checked_policy(policy_path, [])
    errors: list[object] = []
    with open(os.devnull, "w") as out:
        _, stats = run_score(
            [path],
            policy,
            sinks=[report_sink(FORMAT, out)],
            group_by="trace",
            assume_coverage=[],
            fail_on="unsafe",
            on_error=errors.append,
            jobs=jobs,
        )
    if errors:
        raise SystemExit(f"unexpected input errors: {errors[:3]}")
    return stats.spans


def pipeline_prefix(upto: str) -> Callable[[Path, Path], int]:
    """The one-process pipeline up to ``upto`` (decode, assemble, normalize, evaluate),
    through the functions ``score`` calls; the spans read."""

    def run_prefix(path: Path, policy_path: Path) -> int:
        from rampart_otel.engine import score_run
        from rampart_otel.normalize import normalize
        from rampart_otel.pipeline import ReadStats, runs
        from rampart_otel.receivers.files import read_paths
        from rampart_otel.scoring import load_checked_policy

        if upto == "decode":
            return sum(len(item) for item in read_paths([path]) if isinstance(item, list))
        policies = [load_checked_policy(policy_path, [])] if upto == "evaluate" else []
        stats = ReadStats()
        for run in runs([path], stats):
            if upto == "normalize":
                normalize(run)
            elif upto == "evaluate":
                score_run(run, policies)
        return stats.spans

    return run_prefix


STAGES: list[tuple[str, Callable[[Path, Path], int]]] = [
    ("read + decode", pipeline_prefix("decode")),
    ("+ assemble runs", pipeline_prefix("assemble")),
    ("+ normalize", pipeline_prefix("normalize")),
    ("+ evaluate the policy", pipeline_prefix("evaluate")),
    ("+ report: the whole score -j1", score),
]


def stage_table(path: Path, policy_path: Path, rounds: int, expected: int) -> None:
    """CPU µs per span of the floor and each pipeline prefix, alternating, medians."""
    from rampart_otel.engine import fewer_young_collections

    names = ["floor"] + [name for name, _ in STAGES]
    samples: dict[str, list[float]] = {name: [] for name in names}
    for _ in range(rounds):
        with fewer_young_collections():  # as score runs
            for name, fn in [("floor", lambda p, _policy: floor(p)), *STAGES]:
                spans, cpu = timed(fn, path, policy_path, clock=time.process_time)
                if spans != expected:
                    raise SystemExit(f"{name}: read {spans} spans, not {expected}")
                samples[name].append(1e6 * cpu / spans)
    med = {name: statistics.median(values) for name, values in samples.items()}
    cores = os.cpu_count() or 1
    budget = cores * med["floor"] / 0.5  # CPU per span at half the floor's rate, all cores
    print(f"  {'CPU µs per span, median':<34}{'cumulative':>10}{'this stage':>11}")
    print(f"  {'floor':<34}{med['floor']:>10.1f}")
    previous = 0.0
    for name, _ in STAGES:
        print(f"  {name:<34}{med[name]:>10.1f}{med[name] - previous:>11.1f}")
        previous = med[name]
    print(
        f"  budget at 0.5x the floor on {cores} cores: {budget:.1f} µs of CPU per span, all in"
        f" (the whole score -j1 takes {previous / budget:.1f}x that)"
    )


def timed(
    fn: Callable[..., int], *args: object, clock: Callable[[], float] = time.perf_counter
) -> tuple[int, float]:
    """Spans, and seconds by ``clock`` (``time.process_time``: this process's CPU)."""
    start = clock()
    spans = fn(*args)
    return spans, clock() - start


def peak_rss_of_score(path: Path, policy_path: Path) -> tuple[float, float]:
    """Peak RSS (MiB) and seconds of a full score in a fresh child process.

    The child reads its own high-water mark (``VmHWM``): Linux carries ``ru_maxrss`` over
    ``exec``, so a child started by this (large) process would report this one's peak.
    """
    code = (
        "import resource, sys, time\n"
        "sys.path.insert(0, sys.argv[3])\n"
        "from bench_score import score, own_peak_rss_kib\n"
        "from pathlib import Path\n"
        "t = time.perf_counter()\n"
        "score(Path(sys.argv[1]), Path(sys.argv[2]))\n"
        "print(own_peak_rss_kib(), time.perf_counter() - t)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(path), str(policy_path), str(Path(__file__).parent)],
        capture_output=True,
        text=True,
        check=True,
    )
    rss_kib, seconds = done.stdout.split()
    return int(rss_kib) / 1024, float(seconds)


def own_peak_rss_kib() -> int:
    """This process's peak RSS in KiB: ``VmHWM`` where Linux has it, else ``ru_maxrss``."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def mib(path: Path) -> float:
    return path.stat().st_size / (1 << 20)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=16_000, help="traces in the input")
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds")
    parser.add_argument("--policy", type=Path, default=POLICY)
    parser.add_argument("--proto", action="store_true", help="length-prefixed protobuf too")
    parser.add_argument("--rss-runs", type=int, default=10_000, help="1x input for RSS")
    parser.add_argument("--no-rss", action="store_true", help="skip the memory comparison")
    parser.add_argument("--jobs", type=int, default=2, help="workers for the -jN column")
    parser.add_argument("--keep", type=Path, help="write the input here and keep it")
    parser.add_argument("--stages", action="store_true", help="CPU per span of each stage")
    parser.add_argument(
        "--format",
        choices=("json", "terminal"),
        default="json",
        help="the report score writes: json (all coverage, report@1) or terminal (the default"
        " overview, which shows no coverage, so score reads only what the checks need)",
    )
    args = parser.parse_args()
    global FORMAT
    FORMAT = args.format

    with tempfile.TemporaryDirectory(prefix="bench-score-") as tmp:
        directory = args.keep or Path(tmp)
        directory.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        full, proto_path, expected = write_input(directory, args.runs, args.proto)
        print(
            f"input: {args.runs} runs, {expected} spans, JSON Lines {mib(full):.0f} MiB"
            + (f", protobuf {mib(proto_path):.0f} MiB" if proto_path else "")
            + f" (built in {time.perf_counter() - start:.1f} s)"
        )
        print(f"python {sys.version.split()[0]}, policy {args.policy}, --format {FORMAT}")
        inputs = [("json", full)] + ([("proto", proto_path)] if proto_path else [])
        jobs = args.jobs
        for label, path in inputs:
            rows = []
            print(
                f"\n{label}: {'round':>5}  {'floor spans/s':>13}  {'score -j1':>10}  "
                f"{f'score -j{jobs}':>10}  ratio -j1  ratio -j{jobs}"
            )
            for i in range(args.rounds):
                spans_f, t_f = timed(floor, path)
                spans_1, t_1 = timed(score, path, args.policy, 1)
                spans_n, t_n = timed(score, path, args.policy, jobs)
                if not spans_f == spans_1 == spans_n == expected:
                    raise SystemExit(f"read {spans_f}/{spans_1}/{spans_n} spans, not {expected}")
                row = (spans_f / t_f, spans_1 / t_1, spans_n / t_n)
                rows.append(row)
                pad = " " * len(label)
                print(
                    f"{pad}  {i + 1:>5}  {row[0]:>13,.0f}  {row[1]:>10,.0f}  {row[2]:>10,.0f}"
                    f"  {row[1] / row[0]:>9.2f}  {row[2] / row[0]:>8.2f}"
                )
            med = [statistics.median(r[k] for r in rows) for k in range(3)]
            ratio_1 = statistics.median(r[1] / r[0] for r in rows)
            ratio_n = statistics.median(r[2] / r[0] for r in rows)
            print(
                f"{label} median: floor {med[0]:,.0f} spans/s, score -j1 {med[1]:,.0f}, "
                f"score -j{jobs} {med[2]:,.0f}; ratio to the floor -j1 {ratio_1:.2f}, "
                f"-j{jobs} {ratio_n:.2f} (targets: -j1 >= {TARGET_1[label]:.2f}, -j{jobs} >= 0.40)"
            )
            if args.stages:
                print(f"\n{label}: where the time goes, one process")
                stage_table(path, args.policy, args.rounds, expected)

        if not args.no_rss:
            print(f"\npeak RSS of a full score, in a child process ({args.policy.name}):")
            print(
                f"{'input':>8}  {'runs':>6}  {'spans':>7}  {'MiB':>7}  {'peak RSS MiB':>12}"
                f"  {'seconds':>7}  {'score spans/s':>13}"
            )
            for label, runs in (("1x", args.rss_runs), ("4x", 4 * args.rss_runs)):
                path, _, spans = write_input(directory, runs, False, f"rss-{label}")
                rss, seconds = peak_rss_of_score(path, args.policy)
                print(
                    f"{label:>8}  {runs:>6}  {spans:>7}  {mib(path):>7.0f}  {rss:>12.0f}"
                    f"  {seconds:>7.1f}  {spans / seconds:>13,.0f}"
                )
                path.unlink()
        print(f"\nthis process: peak RSS {_self_rss():.0f} MiB")


def _self_rss() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


if __name__ == "__main__":
    main()
