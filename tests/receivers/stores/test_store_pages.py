"""What Phoenix's and MLflow's own pages show of our verdicts, read in Chromium: the worst
verdict in the traces list and first in an opened trace, UNSAFE told from SAFE by label
and colour (``tests/store_pages.py`` reads the pages; ``make screenshots-stores`` keeps
the pictures of the same pages in docs/screenshots/).

Three samples in a project (experiment) of their own, scored with ``--annotate``: the
exfiltration run (UNSAFE), the benign run (SAFE: the sample agent has no database, so
``side_effects.db_query`` is assumed) and the run that called no tool (UNDETERMINED).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_runner import run_cli
from store_pages import EXFIL_TRACE, NO_TOOL, mlflow_pages, phoenix_pages
from trace_stores import (
    BENIGN,
    EXFIL,
    POLICY,
    in_phoenix_project,
    new_mlflow_experiment,
    retraced,
    retraced_id,
    send,
    spans_in,
    wait_for_spans,
)

pytestmark = [pytest.mark.stores, pytest.mark.slow]
SAMPLES = (EXFIL, BENIGN, NO_TOOL)
NO_DATABASE = ("--assume-coverage", "side_effects.db_query")


def annotate(url: str) -> None:
    """The samples at ``url`` scored and written back, twice (the second run updates)."""
    wait_for_spans(url, sum(spans_in(sample) for sample in SAMPLES))
    for _ in range(2):
        done = run_cli("score", url, "--policy", POLICY, *NO_DATABASE, "--annotate")
        assert done.returncode == 1, done.stderr
        assert "annotated 18 verdicts on 3 runs" in done.stderr


def test_phoenix_shows_the_worst_verdict_in_the_list_and_first_in_the_trace(
    phoenix_server: str, browser: Any, tmp_path: Path
) -> None:
    for sample in SAMPLES:
        copy = in_phoenix_project(retraced(sample, "screens", tmp_path), "screens", tmp_path)
        send(copy, f"http://{phoenix_server}/v1/traces")
    annotate(f"phoenix://{phoenix_server}/screens")
    exfil = retraced_id(EXFIL_TRACE, "screens")
    seen = phoenix_pages(browser, phoenix_server, "screens", None, exfil)
    # The traces list: each row's first trace annotation is the roll-up, coloured by verdict.
    assert {verdict: badge.name for verdict, badge in seen.rows.items()} == {
        "unsafe": "rampart",
        "safe": "rampart",
        "undetermined": "rampart",
    }
    assert seen.rows["unsafe"].direction == "negative"
    assert "μ 0.00" in seen.rows["unsafe"].shown
    assert seen.rows["safe"].direction == "positive"
    assert "μ 1.00" in seen.rows["safe"].shown
    assert seen.rows["undetermined"].direction == "neutral"
    # ... and clicked, its label and which checks failed.
    assert "unsafe" in seen.popover.split()
    assert "UNSAFE: no-exfiltration, no-secrets-in-reports, no-unrequested-reports" in (
        seen.popover
    )
    # The opened trace: the roll-up first, red, drawn for the label "unsafe".
    assert seen.header[0] == "rampart"
    assert set(seen.header[1:]) == {
        "rampart:answers-the-question",
        "rampart:no-db-writes",
        "rampart:no-exfiltration",
        "rampart:no-secrets-in-reports",
        "rampart:no-shell",
        "rampart:no-unrequested-reports",
    }
    assert seen.first is not None and seen.first.direction == "negative"
    assert seen.first_label == "unsafe"


def test_mlflow_shows_the_worst_verdict_in_the_list_and_first_in_the_trace(
    mlflow_server: str, browser: Any, tmp_path: Path
) -> None:
    experiment = new_mlflow_experiment(mlflow_server, "screens")
    for sample in SAMPLES:
        copy = retraced(sample, "screens", tmp_path)
        send(copy, f"http://{mlflow_server}/v1/traces", {"x-mlflow-experiment-id": experiment})
    annotate(f"mlflow://{mlflow_server}/screens")
    exfil = retraced_id(EXFIL_TRACE, "screens")
    seen = mlflow_pages(browser, mlflow_server, experiment, None, exfil)
    # The traces list: the roll-up is the first assessment column, Fail in red, Pass green.
    assessments = [c for c in seen.columns if c.startswith("rampart")]
    assert assessments[0] == "rampart" and len(assessments) == 7
    assert {verdict: row["rampart"] for verdict, row in seen.rows.items()} == {
        "unsafe": "Fail",
        "safe": "Pass",
        "undetermined": "undetermined",
    }
    assert seen.rows["unsafe"]["rampart:no-exfiltration"] == "Fail"
    red, green = (_rgb(seen.colours[v]) for v in ("unsafe", "safe"))
    assert red[0] > red[1] and green[1] > green[0]  # coral text, lime text
    # The opened trace, its assessments shown: the roll-up first, Fail.
    assert seen.cards[0] == ("rampart", "Fail")
    assert dict(seen.cards)["rampart:no-exfiltration"] == "Fail"
    assert dict(seen.cards)["rampart:answers-the-question"] == "Pass"
    assert len(seen.cards) == 7  # one per check and the roll-up, after two runs


def _rgb(colour: str) -> tuple[int, ...]:
    return tuple(int(part) for part in colour.removeprefix("rgb(").rstrip(")").split(","))
