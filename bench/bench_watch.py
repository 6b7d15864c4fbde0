"""What the watcher (``rampart_otel.watch``) costs a running agent, as ratios of medians.

Two workloads, each timed in fresh processes with and without the watcher (a hook cannot be
removed, so no process times both):

- ``agent``: the tool-calling loop of ``samples/frameworks/openai_tool_loop.py`` (the openai
  SDK, OpenInference's instrumentation, an AGENT span and a TOOL span per call) against the
  scripted model (``samples/scripted_model.py``, script ``benign``: two model calls and a
  ``fetch_weather`` that GETs the loopback weather service with ``urllib``), ``--runs``
  agent runs per process;
- ``connects``: ``--connects`` TCP connects to a loopback listener (closed with a reset, so
  no port is left in TIME_WAIT), inside one span: each one a watched span when watched.

Every process traces through the SDK with a batch processor whose exporter drops the spans
(what an OTLP exporter costs is the same with or without the watcher). Printed: the median
wall time of ``--repeat`` processes per variant, and watched / unwatched.

Run: ``python bench/bench_watch.py`` (``--quick`` for a smoke run).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import statistics
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _tracing() -> None:
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

    class Dropped(SpanExporter):
        def export(self, spans: Sequence[object]) -> SpanExportResult:
            return SpanExportResult.SUCCESS

    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(Dropped(), max_queue_size=65536))
    trace.set_tracer_provider(provider)


def _agent(runs: int) -> float:
    from openinference.instrumentation.openai import OpenAIInstrumentor
    from opentelemetry import trace

    from samples.frameworks import openai_tool_loop as loop
    from samples.frameworks import tools as task
    from samples.frameworks import watch_tools

    OpenAIInstrumentor().instrument()
    tools = [
        loop.Tool(
            "fetch_weather", "weather", loop.string_parameter("city"), watch_tools.fetch_weather
        )
    ]
    start = time.perf_counter()
    for _ in range(runs):
        loop.run(task.QUESTION, tools)
    elapsed = time.perf_counter() - start
    trace.get_tracer_provider().shutdown()  # type: ignore[attr-defined]
    return elapsed


def _connects(count: int) -> float:
    from opentelemetry import trace

    listener = socket.create_server(("127.0.0.1", 0), backlog=1024)
    port = listener.getsockname()[1]

    def accept() -> None:
        while True:
            try:
                accepted, _ = listener.accept()
            except OSError:
                return
            accepted.close()

    threading.Thread(target=accept, daemon=True).start()
    reset = struct.pack("ii", 1, 0)
    start = time.perf_counter()
    with trace.get_tracer("bench").start_as_current_span("tool"):
        for _ in range(count):
            client = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, reset)
            client.connect(("127.0.0.1", port))
            client.close()
    elapsed = time.perf_counter() - start
    listener.close()
    trace.get_tracer_provider().shutdown()  # type: ignore[attr-defined]
    return elapsed


def inner(workload: str, amount: int, watched: bool) -> None:
    """One timed process: prints its seconds as JSON."""
    sys.path.insert(0, str(REPO))
    _tracing()
    if watched:
        import rampart_otel

        rampart_otel.watch()
    seconds = _agent(amount) if workload == "agent" else _connects(amount)
    print(json.dumps({"seconds": seconds}))


def _timed(workload: str, amount: int, watched: bool, env: dict[str, str]) -> float:
    command = [sys.executable, __file__, "--inner", workload, str(amount)]
    done = subprocess.run(
        [*command, *(["--watched"] if watched else [])],
        capture_output=True,
        text=True,
        env=env,
        timeout=1800,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"{workload} ({'watched' if watched else 'unwatched'}): {done.stderr}")
    return float(json.loads(done.stdout.strip().splitlines()[-1])["seconds"])


@contextlib.contextmanager
def _services() -> Iterator[dict[str, str]]:
    """The scripted model and the weather service, in this process, for every child."""
    sys.path.insert(0, str(REPO))
    from samples.scripted_model import ScriptedModel
    from samples.services import serve

    with ScriptedModel("benign") as model, serve("weather", "127.0.0.1") as weather:
        yield {
            **{k: v for k, v in os.environ.items() if "PROXY" not in k.upper()},
            "OPENAI_BASE_URL": model.base_url,
            "OPENAI_API_KEY": "sk-scripted-0000",
            "SAMPLE_WEATHER_URL": f"http://localhost:{weather}/weather",
            "NO_PROXY": "*",
            "PYTHONPATH": str(REPO),
        }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200, help="agent runs per process")
    parser.add_argument("--connects", type=int, default=100_000, help="connects per process")
    parser.add_argument("--repeat", type=int, default=5, help="processes per variant")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 10 runs, 2000")
    parser.add_argument("--inner", nargs=2, metavar=("WORKLOAD", "AMOUNT"), help=argparse.SUPPRESS)
    parser.add_argument("--watched", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.inner:
        inner(args.inner[0], int(args.inner[1]), args.watched)
        return 0
    runs, connects, repeat = args.runs, args.connects, args.repeat
    if args.quick:
        runs, connects, repeat = 10, 2000, 1
    with _services() as env:
        for workload, amount, unit in (("agent", runs, "runs"), ("connects", connects, "")):
            times = {False: [], True: []}  # type: dict[bool, list[float]]
            for _ in range(repeat):
                for watched in (False, True):  # interleaved: load drifts alike for both
                    times[watched].append(_timed(workload, amount, watched, env))
            plain, watched_median = (statistics.median(times[key]) for key in (False, True))
            label = f"{workload} ({amount} {unit or 'connects'})"
            print(
                f"{label:<26} unwatched {plain:8.3f} s  watched {watched_median:8.3f} s  "
                f"ratio {watched_median / plain:5.2f}  (medians of {repeat} processes)"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
