"""normalize runs the jobs JOBS lists, in that order, each once; docs/architecture.md's
table is JOBS (``make docs``)."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from rampart_otel import normalize as normalize_module
from rampart_otel.normalize import JOBS, jobs_table

ARCHITECTURE = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"


def _called_in_order() -> list[str]:
    """The names of the functions ``normalize`` calls, in the order its code calls them."""
    tree = ast.parse(inspect.getsource(normalize_module.normalize))
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)]
    calls.sort(key=lambda node: (node.lineno, node.col_offset))
    names = []
    for node in calls:
        if isinstance(node.func, ast.Name):
            names.append(node.func.id)
    return names


def test_normalize_runs_every_job_once_in_the_tables_order() -> None:
    job_names = [job.function.__name__ for job in JOBS]
    called = [name for name in _called_in_order() if name in job_names]
    assert called == job_names


def test_each_job_reads_only_what_earlier_jobs_made() -> None:
    made = {"run"}
    for job in JOBS:
        assert set(job.reads) <= made, (job.name, set(job.reads) - made)
        made.add(job.makes)


def test_the_docs_table_is_the_jobs() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    body = text.split("<!-- jobs -->", 1)[1].split("<!-- /jobs -->", 1)[0]
    assert body.strip() == jobs_table().strip(), "run `make docs`"
