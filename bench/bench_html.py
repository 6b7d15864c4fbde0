"""A 10,000-run HTML report: its size, and how fast it opens and filters in Chromium.

The input replicates the recorded samples to ``--runs`` runs (as ``bench_score.py`` does),
``rampart-otel score --format html`` writes the report, and the system's Chromium
(Debian's ``chromium``, driven by Playwright) opens it ``--rounds`` times:

- load: from navigation until the page's script has parsed the data and rendered the
  summary and the first page of results (``body[data-ready]``);
- filter: choosing a status in the filter until the table and its count are redrawn;
- run: clicking a result until the run's waterfall is drawn.

Medians are printed. Run: ``python bench/bench_html.py`` (``--help`` for options).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(1, str(Path(__file__).parents[1] / "tests"))
from bench_score import POLICY, write_input
from browser import system_chromium


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=2, help="score --jobs")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-html-") as tmp:
        directory = Path(tmp)
        traces, _, spans = write_input(directory, args.runs, False)
        report = directory / "report.html"
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "rampart_otel.cli", "score", str(traces), "--policy",
             str(POLICY), "--format", "html", "-o", str(report), "-j", str(args.jobs)],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        if done.returncode not in (0, 1):
            raise SystemExit(done.stderr)
        written = time.perf_counter() - started
        size = report.stat().st_size / (1 << 20)
        print(f"input: {args.runs} runs, {spans} spans; report {size:.1f} MiB, "
              f"written in {written:.1f} s (score -j{args.jobs})")  # fmt: skip
        loads, filters, runs = [], [], []
        with system_chromium() as browser:
            for round_no in range(args.rounds):
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                start = time.perf_counter()
                page.goto(report.as_uri(), timeout=300_000)
                page.wait_for_selector("body[data-ready='1']", timeout=300_000)
                loads.append(time.perf_counter() - start)
                before = page.text_content("#result-count")
                start = time.perf_counter()
                page.select_option("#f-status", "unsafe")
                page.wait_for_function(
                    "before => document.getElementById('result-count').textContent !== before",
                    arg=before,
                )
                filters.append(time.perf_counter() - start)
                start = time.perf_counter()
                page.click("#result-table tbody tr >> nth=0")
                page.wait_for_selector("#waterfall")
                runs.append(time.perf_counter() - start)
                count = page.text_content("#result-count")
                print(f"round {round_no + 1}: load {loads[-1]:.2f} s, filter "
                      f"{1000 * filters[-1]:.0f} ms, open a run {1000 * runs[-1]:.0f} ms "
                      f"({count})")  # fmt: skip
                page.close()
        print(
            f"median: load {statistics.median(loads):.2f} s, filter "
            f"{1000 * statistics.median(filters):.0f} ms, open a run "
            f"{1000 * statistics.median(runs):.0f} ms; report {size:.1f} MiB for {args.runs} runs"
        )


if __name__ == "__main__":
    main()
