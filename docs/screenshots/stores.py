"""``make screenshots-stores``: rampart-otel's verdicts in Arize Phoenix's and MLflow's own
UIs, as a person sees them in Chromium (Debian's ``chromium``, driven by Playwright).

Starts both servers as the tests do (``tests/trace_stores.py``: their venvs from
``.ci/stores-venvs``, loopback only), sends three samples to each over OTLP (the
exfiltration run, the benign run, the run that calls no tool), scores them from
``phoenix://`` and ``mlflow://`` with ``--annotate`` (``--assume-coverage
side_effects.db_query``: the sample agent has no database), and photographs the traces list
and the opened exfiltration trace with the driver the browser test reads the same pages
with (``tests/store_pages.py``). Writes docs/screenshots/phoenix-traces.png,
phoenix-trace.png, mlflow-traces.png and mlflow-trace.png.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "tests"))
from browser import system_chromium  # noqa: E402 - the tests' way to launch it
from store_pages import NO_TOOL, mlflow_pages, phoenix_pages  # noqa: E402
from trace_stores import (  # noqa: E402
    BENIGN,
    EXFIL,
    POLICY,
    in_phoenix_project,
    new_mlflow_experiment,
    running_mlflow,
    running_phoenix,
    send,
    spans_in,
    wait_for_spans,
)

SAMPLES = (EXFIL, BENIGN, NO_TOOL)


def annotate(url: str) -> None:
    wait_for_spans(url, sum(spans_in(sample) for sample in SAMPLES))
    command = [sys.executable, "-m", "rampart_otel.cli", "score", url, "--policy", str(POLICY)]
    command += ["--assume-coverage", "side_effects.db_query", "--annotate"]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode not in (0, 1):
        raise SystemExit(done.stderr)


def phoenix(browser: object) -> None:
    with running_phoenix() as address, tempfile.TemporaryDirectory() as tmp:
        for sample in SAMPLES:
            send(in_phoenix_project(sample, "agents", Path(tmp)), f"http://{address}/v1/traces")
        annotate(f"phoenix://{address}/agents")
        phoenix_pages(browser, address, "agents", OUT)


def mlflow(browser: object) -> None:
    with running_mlflow() as address:
        experiment = new_mlflow_experiment(address, "agents")
        for sample in SAMPLES:
            send(sample, f"http://{address}/v1/traces", {"x-mlflow-experiment-id": experiment})
        annotate(f"mlflow://{address}/agents")
        mlflow_pages(browser, address, experiment, OUT)


def main() -> None:
    with system_chromium() as browser:
        if "mlflow" not in sys.argv[1:]:
            phoenix(browser)
        if "phoenix" not in sys.argv[1:]:
            mlflow(browser)


if __name__ == "__main__":
    main()
