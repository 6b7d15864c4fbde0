"""Shape 3: a Python agent writes its trace to a file (or sends it to ``rampart-otel collect``).

    python -m examples.trace_file --out trace.jsonl    # then: rampart-otel score trace.jsonl ...
    python -m examples.trace_file --otlp http://127.0.0.1:4318

``rampart_otel.setup(...)`` is the only tracing code: it installs the tracer provider, a
file exporter writing one OTLP/JSON request per line (the OpenTelemetry Collector file
exporter's format, which rampart-otel reads) or the SDK's OTLP/HTTP exporter pointed at the
collector's ``/v1/traces``, and the instrumentations of the libraries present; it flushes
at exit. The agent it traces here is the hand-written tool loop of ``examples.tool_loop``.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

import rampart_otel


def main(argv: Sequence[str] | None = None) -> int:
    from examples.tool_loop import run_agent

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--out", type=Path, help="the trace file to write (OTLP/JSON lines)")
    where.add_argument("--otlp", help="a collector's base URL, e.g. http://127.0.0.1:4318")
    args = parser.parse_args(argv)
    rampart_otel.setup(file=args.out, endpoint=args.otlp, service_name="weather-agent")
    print(run_agent())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
