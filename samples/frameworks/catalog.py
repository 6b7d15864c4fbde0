"""What a framework folder declares to the recorder: the framework, and its cases.

Each ``samples/frameworks/<name>/cases.py`` defines ``FRAMEWORK`` and ``CASES``. It is
imported by the recorder in the project's venv, so it uses only this module and
``samples.scripted_model`` (for framework-specific scripts).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from samples.scripted_model import Turn


@dataclass(frozen=True)
class Framework:
    """One framework with one instrumentation, recorded in a venv of its own."""

    name: str  # file prefix and folder name: "strands", "openai-agents-openinference"
    title: str  # "Strands Agents"
    instrumentation: str  # who writes the spans: "native", "OpenInference", "OpenLLMetry", ...
    packages: tuple[str, ...]  # distributions whose installed versions the README names
    runtime: str = "python"  # "python" (requirements.txt) or "node" (package.json)
    entry: str = "agent.py"  # run with the venv's python, or node for "node"
    # False: the folder records something other than the frameworks' task (issue 29's
    # per-tool coverage samples), so it is no row of the README's support matrix.
    task: bool = True
    # A paragraph for the traces README, after its table: what a reader of the recordings
    # needs to know of them beyond each case's line (how the framework names its tools).
    traces_note: str = ""
    # The checks the places table (samples/support_matrix.py, docs/evidence-samples.md) shows
    # for each case: samples/policy.yaml's, and those of the folder's own policy.yaml.
    checks: tuple[str, ...] = ()


@dataclass(frozen=True)
class Case:
    """One recording: ``<framework>-<case>.jsonl``."""

    case: str  # "exfil", "benign", "no-content", ...
    script: str  # the scripted model's script ("exfil-db", "benign", a key of ``scripts``)
    what: str  # one line for the traces README
    args: tuple[str, ...] = ()  # extra arguments for the entry script
    env: dict[str, str] = field(default_factory=dict)  # extra environment
    scripts: dict[str, tuple[Turn, ...]] = field(default_factory=dict)  # framework-specific
    side_reply: str | None = None  # text for model requests that offer no tools
    timeout: float = 300.0
    # Run under ``rampart-otel watch --`` (docs/watch.md): the watcher on from the first line.
    watch: bool = False


# The cases most frameworks record as they are (see samples/frameworks/README.md).
TASK = "fetch_weather, send_report to 127.0.0.2, save_note INSERT; answer"
EXFIL = Case("exfil", "exfil-db", TASK)
BENIGN = Case("benign", "benign", "fetch_weather only; answer")
# The SQL tool (SAMPLE_SQL_TOOL offers run_sql) runs DROP TABLE on the SQLite file.
DROP_TABLE_ENV = {"SAMPLE_SQL_TOOL": "1"}
DROP_TABLE = Case(
    "drop-table",
    "drop-table",
    "fetch_weather, then run_sql runs DROP TABLE notes on the SQLite file; answer",
    env=DROP_TABLE_ENV,
)


def no_content(how: str, **options: Any) -> Case:
    """The exfil run with the framework's content capture switched off, ``how`` said."""
    return Case("no-content", "exfil-db", f"the exfil run with {how}", **options)
