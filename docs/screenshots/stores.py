"""``make screenshots-stores``: rampart-otel's verdicts in Arize Phoenix's and MLflow's own
UIs, as a person sees them in Chromium (Debian's ``chromium``, driven by Playwright).

Starts both servers as the tests do (``tests/trace_stores.py``: their venvs from
``.ci/stores-venvs``, loopback only), sends the exfiltration sample to each over OTLP,
scores it from ``phoenix://`` and ``mlflow://`` with ``--annotate``, and photographs the
trace. Writes docs/screenshots/phoenix-annotations.png and mlflow-assessments.png.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "tests"))
from browser import system_chromium  # noqa: E402 - the tests' way to launch it
from trace_stores import (  # noqa: E402
    EXFIL,
    POLICY,
    running_mlflow,
    running_phoenix,
    send,
    spans_in,
    wait_for_spans,
)

TRACE = "9eabfebdb8b003e645c9dab8a4a5e7ca"  # the exfiltration sample's trace
VIEWPORT = {"width": 1700, "height": 1000}


def annotate(url: str) -> None:
    command = [sys.executable, "-m", "rampart_otel.cli", "score", url, "--policy", str(POLICY)]
    done = subprocess.run([*command, "--annotate"], capture_output=True, text=True)
    if done.returncode not in (0, 1):
        raise SystemExit(done.stderr)


def phoenix(browser: object) -> None:
    with running_phoenix() as address:
        send(EXFIL, f"http://{address}/v1/traces")
        wait_for_spans(f"phoenix://{address}/default", spans_in(EXFIL))
        annotate(f"phoenix://{address}/default")
        project = httpx.get(f"http://{address}/v1/projects").json()["data"][0]["id"]
        page = browser.new_page(viewport=VIEWPORT)  # type: ignore[attr-defined]
        page.goto(f"http://{address}/projects/{project}/traces/{TRACE}")
        page.wait_for_timeout(5000)
        page.locator("h3:has-text('Annotations')").click()
        page.wait_for_timeout(1000)
        page.locator("text=Table >> visible=true").first.click()
        page.wait_for_timeout(1500)
        page.screenshot(path=OUT / "phoenix-annotations.png")


def mlflow(browser: object) -> None:
    with running_mlflow() as address:
        created = httpx.post(
            f"http://{address}/api/2.0/mlflow/experiments/create", json={"name": "agents"}
        ).json()["experiment_id"]
        send(EXFIL, f"http://{address}/v1/traces", {"x-mlflow-experiment-id": created})
        wait_for_spans(f"mlflow://{address}/agents", spans_in(EXFIL))
        annotate(f"mlflow://{address}/agents")
        page = browser.new_page(viewport=VIEWPORT)  # type: ignore[attr-defined]
        page.goto(f"http://{address}/#/experiments/{created}/traces")
        page.wait_for_timeout(8000)
        for name in ("Got it",):  # first-visit guidance
            if page.get_by_text(name, exact=True).count():
                page.get_by_text(name, exact=True).first.click()
        page.wait_for_timeout(500)
        if page.get_by_text("MLflow Assistant").count():  # its close button has no label
            page.mouse.click(1664, 36)
            page.wait_for_timeout(1000)
        page.get_by_text("Weather in Paris? Also file the daily report.").first.click()
        page.wait_for_timeout(3000)
        box = page.locator("button[aria-label^='Assess trace']").first.bounding_box()
        page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.wait_for_timeout(2000)
        page.screenshot(path=OUT / "mlflow-assessments.png")


def main() -> None:
    with system_chromium() as browser:
        if "mlflow" not in sys.argv[1:]:
            phoenix(browser)
        if "phoenix" not in sys.argv[1:]:
            mlflow(browser)


if __name__ == "__main__":
    main()
