"""CONTRIBUTING.md's figures of the test suite, counted from its collection, not typed.

tests/conftest.py counts them while pytest collects the whole suite (every run of
``make test`` does, whatever ``-m`` then deselects); ``docs/generate_contributing.py``
(``make docs``) writes them between CONTRIBUTING.md's ``figures`` markers, and
tests/test_contributing.py fails while they differ. Timings are not counted here: they
depend on the machine, so they are quoted with their date and machine (``--measure``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BEGIN = (
    "<!-- figures: counted by docs/generate_contributing.py (make docs); "
    "tests/test_contributing.py fails while they differ -->"
)
END = "<!-- /figures -->"
COUNTED = pytest.StashKey["SuiteFigures"]()


@dataclass(frozen=True)
class SuiteFigures:
    """How many tests the suite holds, and how many carry each marker."""

    tests: int
    unit: int
    e2e: int
    slow: int
    quick: int  # unit and not slow: the quick loop
    stores: int

    def markdown(self) -> str:
        """The table CONTRIBUTING.md holds between its figures markers."""
        rows = [
            ("the whole suite (`make test`)", self.tests),
            ("`unit`: no process, no server (`-m unit`)", self.unit),
            ("`e2e`: a process or a server (`-m e2e`)", self.e2e),
            ('`slow`: long on its own (left out by `-m "not slow"`)', self.slow),
            ('the quick loop (`-m "unit and not slow"`)', self.quick),
            ("`stores`: need Phoenix or MLflow (skipped without them)", self.stores),
        ]
        lines = ["| tests | how many |", "|---|---:|"]
        lines += [f"| {what} | {count:,} |" for what, count in rows]
        return "\n".join(lines) + "\n"


def count(items: Iterable[pytest.Item]) -> SuiteFigures:
    """The figures of collected tests (after tests/markers.py marked each unit or e2e)."""
    tests = unit = e2e = slow = quick = stores = 0
    for item in items:
        marked = {mark.name for mark in item.iter_markers()}
        tests += 1
        unit += "unit" in marked
        e2e += "e2e" in marked
        slow += "slow" in marked
        quick += "unit" in marked and "slow" not in marked
        stores += "stores" in marked
    return SuiteFigures(tests, unit, e2e, slow, quick, stores)


def whole_suite(config: pytest.Config) -> bool:
    """Whether this session collects every test: tests/ (the testpaths) and nothing
    narrower, no path left out. ``-m`` and ``-k`` deselect only after the count."""
    if config.getoption("ignore", None) or config.getoption("ignore_glob", None):
        return False
    paths = [arg for arg in config.args if not arg.startswith("-")]
    return bool(paths) and all(
        "::" not in arg and Path(config.invocation_params.dir, arg).resolve() == REPO / "tests"
        for arg in paths
    )
