"""Rewrite CONTRIBUTING.md's figures of the test suite, counted from a collection of it
(tests/figures.py), between its ``figures`` markers:

    make docs   (or: .venv/bin/python docs/generate_contributing.py)

tests/test_contributing.py fails while they differ (in a run that collects the whole suite,
as ``make test`` does). With ``--measure`` it also runs the suite, ``-n 2`` and ``-m unit``
in one process, and writes the timings between the ``timings`` markers with the date and
the machine they were taken on: timings are quoted, never tested.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import io
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

DOCS = Path(__file__).resolve().parent
REPO = DOCS.parent
sys.path[:0] = [str(DOCS), str(REPO / "tests")]

import figures  # noqa: E402  (tests/figures.py: the counting, shared with tests/conftest.py)
import pytest  # noqa: E402
from generate_policy_reference import between  # noqa: E402

CONTRIBUTING = REPO / "CONTRIBUTING.md"
TIMINGS_BEGIN = (
    "<!-- timings: measured by docs/generate_contributing.py --measure, "
    "on the date and machine they name -->"
)
TIMINGS_END = "<!-- /timings -->"


class _Counted:
    """A pytest plugin that keeps what tests/conftest.py counted while collecting."""

    found: figures.SuiteFigures | None = None

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.found = session.config.stash.get(figures.COUNTED, None)


def collected() -> figures.SuiteFigures:
    """The whole suite's figures, from a collection of tests/ in this process."""
    counted = _Counted()
    args = ["--collect-only", "-q", "-p", "no:cacheprovider", str(REPO / "tests")]
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        code = pytest.main(args, plugins=[counted])
    if code != 0 or counted.found is None:
        tail = "\n".join(printed.getvalue().splitlines()[-15:])
        raise SystemExit(f"collecting the tests failed (exit {code}):\n{tail}")
    return counted.found


def with_figures(text: str, found: figures.SuiteFigures) -> str:
    """``text`` (CONTRIBUTING.md) with the figures table between its markers."""
    return between(text, CONTRIBUTING, figures.BEGIN, figures.END, found.markdown())


def _timed(*args: str) -> tuple[float, float]:
    """(wall, CPU) seconds of one pytest run in a process of its own; it must pass."""
    before, start = resource.getrusage(resource.RUSAGE_CHILDREN), time.monotonic()
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", *args], cwd=REPO, check=False)
    wall, after = time.monotonic() - start, resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"pytest {' '.join(args)} failed (exit {done.returncode}): not timed")
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f} min" if seconds >= 120 else f"{seconds:.0f} s"


def timings(found: figures.SuiteFigures, machine: str) -> str:
    """Run the suite as CONTRIBUTING.md says it is run, and say how long it took where."""
    load = os.getloadavg()[0]
    whole = _timed("-n", "2")
    unit = _timed("-m", "unit", "-p", "no:xdist")
    day = datetime.date.today().isoformat()
    return (
        f"Measured {day} on {machine} ({os.cpu_count()} cores, {platform.machine()}, Python "
        f"{platform.python_version()}), at a load average of {load:.0f} when it started: "
        f"the whole suite under `-n 2`, {found.tests:,} tests, in {_minutes(whole[0])} "
        f"({_minutes(whole[1])} of CPU); `-m unit` in one process in {_minutes(unit[0])} "
        f"({_minutes(unit[1])} of CPU).\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--measure", action="store_true", help="run the suite and time it")
    parser.add_argument("--machine", default="the shared machine", help="how to name it")
    options = parser.parse_args()
    found = collected()
    text = with_figures(CONTRIBUTING.read_text(encoding="utf-8"), found)
    if options.measure:
        measured = timings(found, options.machine)
        text = between(text, CONTRIBUTING, TIMINGS_BEGIN, TIMINGS_END, measured)
    CONTRIBUTING.write_text(text, encoding="utf-8")
    print(f"wrote {CONTRIBUTING}: {found.tests:,} tests" + (", timed" if options.measure else ""))


if __name__ == "__main__":
    main()
