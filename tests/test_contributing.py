"""CONTRIBUTING.md's figures of the test suite are the suite's (tests/figures.py)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import figures
import pytest

REPO = Path(__file__).resolve().parents[1]


def test_contributings_figures_are_the_suites(request: pytest.FixtureRequest) -> None:
    """Checked in every run that collects the whole suite (``make test``, ``pytest -m unit``):
    counting needs every test collected, and then it costs nothing."""
    counted = request.config.stash.get(figures.COUNTED, None)
    if counted is None:
        pytest.skip("the figures are counted only when the whole suite is collected")
    text = (REPO / "CONTRIBUTING.md").read_text(encoding="utf-8")
    stated = text.partition(figures.BEGIN)[2].partition(figures.END)[0]
    assert stated == f"\n{counted.markdown()}", "CONTRIBUTING.md's figures are stale: make docs"


class _Item:
    def __init__(self, *names: str) -> None:
        self.marks = [getattr(pytest.mark, name).mark for name in names]

    def iter_markers(self) -> Any:
        return iter(self.marks)


def test_each_test_is_counted_by_its_markers() -> None:
    items = [_Item("unit"), _Item("unit", "slow"), _Item("e2e", "stores"), _Item("e2e")]
    found = figures.count(items)  # type: ignore[arg-type]
    assert found == figures.SuiteFigures(tests=4, unit=2, e2e=2, slow=1, quick=1, stores=1)
    assert '| the quick loop (`-m "unit and not slow"`) | 1 |' in found.markdown()


@pytest.mark.parametrize(
    ("args", "ignored", "whole"),
    [
        (["tests"], [], True),  # the testpaths, as a run with no argument gets them
        ([str(REPO / "tests") + "/"], [], True),
        (["tests/conventions"], [], False),
        (["tests/test_contributing.py::test_each_test_is_counted_by_its_markers"], [], False),
        (["tests"], ["tests/collector"], False),
    ],
)
def test_only_a_session_of_the_whole_suite_counts_it(
    args: list[str], ignored: list[str], whole: bool
) -> None:
    config = SimpleNamespace(
        args=args,
        invocation_params=SimpleNamespace(dir=REPO),
        getoption=lambda name, default=None: ignored if name == "ignore" else default,
    )
    assert figures.whole_suite(config) is whole  # type: ignore[arg-type]
