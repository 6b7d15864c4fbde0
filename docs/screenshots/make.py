"""``make screenshots``: the HTML report and the audit page of the bundled samples, as a
person sees them in Chromium (Debian's ``chromium``, driven by Playwright).

The report comes from ``rampart-otel score --format html`` (secrets masked, as by
default); the audit page from a real collector that the samples were replayed to
(``collect`` + ``replay``), then ``rampart-otel audit --html``. Writes docs/screenshots/*.png.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(__file__).resolve().parent
SAMPLES = ROOT / "samples" / "traces"
POLICY = ROOT / "samples" / "policy.yaml"
sys.path.insert(0, str(ROOT / "tests"))
from browser import system_chromium  # noqa: E402 - the tests' way to launch it

SHOTS = ("report-summary.png", "report-results.png", "report-run.png", "report-waterfall.png",
         "audit.png")  # fmt: skip
ANNOUNCE = re.compile(r"http://([\d.]+):(\d+)/v1/traces")


def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "rampart_otel.cli", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, check=False)


def audit_page(directory: Path) -> Path:
    data = directory / "data"
    log_path = directory / "collector.log"
    with log_path.open("w") as log:
        collector = subprocess.Popen(
            [sys.executable, "-m", "rampart_otel.cli", "collect", "--http", "127.0.0.1:0",
             "--grpc", "off", "--data-dir", str(data), "--policy", str(POLICY)],
            stdout=log, stderr=log,
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while not (match := ANNOUNCE.search(log_path.read_text())):
            if time.monotonic() > deadline or collector.poll() is not None:
                raise SystemExit(f"the collector did not start:\n{log_path.read_text()}")
            time.sleep(0.1)
        done = cli("replay", SAMPLES, "--to", f"http://{match[1]}:{match[2]}")
        if done.returncode != 0:
            raise SystemExit(done.stderr)
        collector.send_signal(signal.SIGTERM)  # drains: every complete run is scored
        collector.wait(120)
    page = directory / "audit.html"
    done = cli("audit", "--data-dir", data, "--html", "-o", page)
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    return page


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="rampart-screenshots-") as tmp:
        directory = Path(tmp)
        report = directory / "report.html"
        done = cli("score", SAMPLES, "--policy", POLICY, "--format", "html", "-o", report)
        if done.returncode not in (0, 1):
            raise SystemExit(done.stderr)
        audit = audit_page(directory)
        with system_chromium() as browser:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(report.as_uri())
            page.wait_for_selector("body[data-ready='1']")
            page.screenshot(path=OUT / "report-summary.png")
            # The results, worst first, each naming its file; a tile filters by verdict.
            page.click("#tiles .tile[data-status='undetermined']")
            page.locator("#results").scroll_into_view_if_needed()
            page.evaluate("document.getElementById('results').scrollIntoView()")
            page.screenshot(path=OUT / "report-results.png")
            page.click("#tiles .tile[data-status='undetermined']")
            page.fill("#f-text", "")
            page.select_option("#f-status", "unsafe")
            page.select_option("#f-check", "no-exfiltration")
            page.click("#result-table tbody tr >> nth=0")
            page.wait_for_selector("#waterfall")
            page.locator("#run").screenshot(path=OUT / "report-run.png")
            # The waterfall: time axis, durations, and the hover card of the exfiltrating POST.
            post = page.locator("#waterfall .wf-row", has_text="POST").first
            post.scroll_into_view_if_needed()
            post.hover()
            box = page.locator("#waterfall").bounding_box()
            tip = page.locator("#wf-tip").bounding_box()
            bottom = max(box["y"] + box["height"], tip["y"] + tip["height"]) + 8
            clip = {"x": 0, "y": box["y"] - 36, "width": 1280, "height": bottom - box["y"] + 36}
            page.screenshot(path=OUT / "report-waterfall.png", clip=clip)
            page.goto(audit.as_uri())
            page.wait_for_selector("body[data-ready='1']")
            page.screenshot(path=OUT / "audit.png")
    for name in SHOTS:
        print(OUT / name)


if __name__ == "__main__":
    main()
