"""The support matrix of docs/frameworks.md is what the recorded samples give today, row for row."""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from samples.support_matrix import (  # noqa: E402
    PLACES_BEGIN,
    PLACES_END,
    PLACES_PAGE,
    README,
    between,
    in_readme,
    places_table,
    table,
)


def test_readme_support_matrix_matches_the_samples() -> None:
    shown = in_readme(README.read_text(encoding="utf-8"))
    assert shown is not None, "docs/frameworks.md lost its support-matrix markers"
    assert shown == table(), "run: python samples/support_matrix.py --write"


def test_the_places_page_matches_the_samples() -> None:
    shown = between(PLACES_PAGE.read_text(encoding="utf-8"), PLACES_BEGIN, PLACES_END)
    assert shown is not None, "docs/evidence-samples.md lost its places-samples markers"
    assert shown == places_table(), "run: python samples/support_matrix.py --write"


def test_the_places_table_has_every_setup_that_declares_checks() -> None:
    rows = places_table().splitlines()[2:]
    for setup in ("db-then-urllib", "destination-in-arguments", "post-body-flow"):
        assert any(f"`{setup}-exfil.jsonl`" in row for row in rows), setup
    unlinked = [row for row in rows if "a2a-delegation-remote-unlinked.jsonl" in row]
    assert [row.split(" | ")[1] for row in unlinked] == ["remote-ops-agent", "weather-agent"]
