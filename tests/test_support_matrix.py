"""The support matrix of docs/frameworks.md is what the recorded samples give today, row for row."""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from samples.support_matrix import README, in_readme, table  # noqa: E402


def test_readme_support_matrix_matches_the_samples() -> None:
    shown = in_readme(README.read_text(encoding="utf-8"))
    assert shown is not None, "docs/frameworks.md lost its support-matrix markers"
    assert shown == table(), "run: python samples/support_matrix.py --write"
