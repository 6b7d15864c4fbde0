"""Record one run of the sample agent in three trace forms at once, with the real exporters.

    python samples/record_forms.py                      # into tests/receivers/forms/
    python samples/record_forms.py --out /tmp/forms

For OpenInference and OpenLLMetry, one ``exfil`` run of ``samples.agent`` exports its spans
three ways: the Collector file exporter's OTLP JSON Lines (``<library>-exfil.otlp.jsonl``), the
SDK's ``ConsoleSpanExporter`` (``<library>-exfil.console.json``) and the
``opentelemetry-exporter-zipkin-json`` exporter, whose POSTs a tiny sink on 127.0.0.1 takes
(``<library>-exfil.zipkin.json``: every body's spans in one list, as Zipkin's
``GET /api/v2/trace/{traceId}`` answers). The tests score each form against the OTLP file of
the same run.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from samples.record import HTTP_SEMCONV  # noqa: E402

LIBRARIES = ("openinference", "openllmetry")


class _Sink(BaseHTTPRequestHandler):
    bodies: list[Any]

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.bodies.append(json.loads(body))  # type: ignore[attr-defined]
        self.send_response(202)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


def record(library: str, out: Path) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Sink)
    server.bodies = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        name = f"{library}-exfil"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "samples.agent",
                "--library",
                library,
                "--scenario",
                "exfil",
                "--http-semconv",
                HTTP_SEMCONV[library],
                "--out",
                str(out / f"{name}.otlp.jsonl"),
                "--console-out",
                str(out / f"{name}.console.json"),
                "--zipkin-endpoint",
                f"http://127.0.0.1:{server.server_port}/api/v2/spans",
            ],
            cwd=REPO,
            check=True,
        )
    finally:
        server.shutdown()
        server.server_close()
    spans = [span for body in server.bodies for span in body]  # type: ignore[attr-defined]
    (out / f"{name}.zipkin.json").write_text(json.dumps(spans) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "tests" / "receivers" / "forms")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for library in LIBRARIES:
        record(library, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
