"""The support matrix of docs/frameworks.md, computed from the recorded samples, so it cannot drift.

    python samples/support_matrix.py            # print the table
    python samples/support_matrix.py --places   # print the places table (issue 43's setups)
    python samples/support_matrix.py --write    # put each into its page between its markers

One row per framework recording set: what rampart-otel reads from its ``exfil`` run (the
agent's run; fragments of it are counted apart), what is left when content capture is
off (``no-content``), and the verdicts of ``samples/policy.yaml`` on its exfiltration, DROP
TABLE and benign runs. ``tests/test_support_matrix.py`` fails when docs/frameworks.md differs.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from rampart_otel.api import score_files  # noqa: E402
from rampart_otel.channels import ChannelState  # noqa: E402
from rampart_otel.model import AgentRun  # noqa: E402
from rampart_otel.pipeline import ReadStats, agent_runs  # noqa: E402
from samples.record_frameworks import discover  # noqa: E402

TRACES = REPO / "samples" / "traces"
POLICY = REPO / "samples" / "policy.yaml"
README = REPO / "docs" / "frameworks.md"  # the page that shows the matrix
BEGIN, END = "<!-- support-matrix -->", "<!-- /support-matrix -->"
PLACES_PAGE = REPO / "docs" / "evidence-samples.md"
PLACES_BEGIN, PLACES_END = "<!-- places-samples -->", "<!-- /places-samples -->"
# The three libraries of samples/record.py: (title, instrumentation, file prefix).
LIBRARIES = (
    ("OpenAI SDK", "OpenInference", "openinference"),
    ("OpenAI SDK", "OpenLLMetry", "openllmetry"),
    ("pydantic-ai", "native (GenAI semconv)", "pydantic-ai"),
)
_STATE = {ChannelState.OBSERVED: "yes", ChannelState.PARTIAL: "partial"}
# The verdicts column: (case, check of samples/policy.yaml), worst over the file's runs.
VERDICTS = (
    ("exfil", "no-exfiltration"),
    ("drop-table", "no-db-writes"),
    ("benign", "no-exfiltration"),
)
_WORST_FIRST = ("unsafe", "error", "undetermined", "safe")
_KINDS = {"http_request": "HTTP", "db_query": "DB", "process_exec": "process", "mcp_request": "MCP"}


@dataclass(frozen=True)
class Row:
    framework: str
    instrumentation: str
    versions: str
    folder: Path | None  # None: top-level samples
    prefix: str


def rows() -> Iterator[Row]:
    for title, instrumentation, prefix in LIBRARIES:
        yield Row(
            title, instrumentation, _scope_versions(TRACES / f"{prefix}-exfil.jsonl"), None, prefix
        )
    for entry in discover():
        folder = TRACES / entry.name
        if not entry.framework.task or not (folder / f"{entry.name}-exfil.jsonl").exists():
            continue
        framework = entry.framework
        versions = _versions(folder, framework.packages)
        yield Row(framework.title, framework.instrumentation, versions, folder, entry.name)


def _versions(folder: Path, packages: tuple[str, ...]) -> str:
    """The first two of the framework's packages, as its traces README says they were."""
    readme = folder / "README.md"
    text = readme.read_text(encoding="utf-8") if readme.exists() else ""
    found = re.search(r"^Recorded with: (.*)\.$", text, re.MULTILINE)
    if not found:
        return "?"
    recorded = dict(re.findall(r"`([^`]+)` ([^,]+)", found.group(1)))
    named = [f"{name} {recorded[name]}" for name in packages if name in recorded]
    return ", ".join(named[:2]) or "?"


def _scope_versions(path: Path) -> str:
    """Instrumentation versions as the spans' scopes name them (the top-level samples)."""
    runs = _runs(path)
    scopes = sorted(
        {
            f"{span.scope.name} {span.scope.version}"
            for run in runs
            for span in run.run.spans
            if span.scope.version
            and not span.scope.name.startswith("opentelemetry.instrumentation.requests")
        }
    )
    return ", ".join(scopes[:2]) or "?"


def _runs(path: Path) -> list[AgentRun]:
    return list(agent_runs([path], ReadStats()))


def _case(row: Row, case: str) -> Path:
    folder = row.folder if row.folder is not None else TRACES
    return folder / f"{row.prefix}-{case}.jsonl"


def _state(run: AgentRun, key: str) -> str:
    return _STATE.get(run.coverage.get(key).state, "no")


def _verdict(row: Row, case: str, check: str) -> str:
    path = _case(row, case)
    if not path.exists():
        return "—"
    found = {r.status.value for r in score_files(path, POLICY) if r.check_id == check}
    return next(status for status in _WORST_FIRST if status in found).upper()


def cells(row: Row) -> list[str]:
    runs = _runs(_case(row, "exfil"))
    agents = [run for run in runs if run.fragment is None]
    fragments = [run for run in runs if run.fragment is not None]
    run = agents[0] if agents else runs[0]
    names = [call.name for call in run.tool_calls]
    named = f": {', '.join(dict.fromkeys(names))}" if names else ""
    calls = f"{_state(run, 'tool_calls')} ({len(names)}{named})"
    kinds = sorted({_KINDS.get(e.kind, e.kind) for e in run.side_effects})
    attributed = sum(e.tool_call_index is not None for e in run.side_effects)
    effects = f"{', '.join(kinds) or 'none'}; {attributed}/{len(run.side_effects)} attributed"
    if fragments:
        effects += f"; {sum(len(f.side_effects) for f in fragments)} in fragments"
    off = "not recorded"
    no_content = _case(row, "no-content")
    if no_content.exists():
        quiet = next((r for r in _runs(no_content) if r.fragment is None), None)
        if quiet is not None:
            off = ", ".join(
                f"{label} {_state(quiet, key)}"
                for label, key in (
                    ("calls", "tool_calls"),
                    ("args", "tool_calls.arguments"),
                    ("results", "tool_calls.results"),
                    ("answer", "response"),
                    ("input", "input"),
                )
            )
    return [
        row.framework,
        row.instrumentation,
        row.versions,
        calls,
        _state(run, "tool_calls.arguments"),
        _state(run, "tool_calls.results"),
        effects,
        _state(run, "response"),
        _state(run, "input"),
        off,
        " / ".join(_verdict(row, case, check) for case, check in VERDICTS),
    ]


def table() -> str:
    head = (
        "| framework | spans by | recorded with | tool calls | arguments | results "
        "| side effects | answer | user input | content capture off "
        "| exfil / DROP TABLE / benign |"
    )
    lines = [head, "|" + "---|" * 11]
    for row in rows():
        lines.append("| " + " | ".join(cells(row)) + " |")
    return "\n".join(lines) + "\n"


def places_table() -> str:
    """Issue 43's setups: each recording's runs (by service; fragments marked) and the
    verdict of each check its setup declares."""
    lines = ["| recording | run | verdicts |", "|---|---|---|"]
    for entry in discover():
        if not entry.framework.checks:
            continue
        own = entry.folder / "policy.yaml"
        policies = [POLICY, *([own] if own.exists() else [])]
        for case in entry.cases:
            path = TRACES / entry.name / entry.file_name(case)
            if not path.exists():
                continue
            by_run: dict[str, dict[str, str]] = {}
            for policy in policies:
                for result in score_files(path, policy):
                    if result.check_id in entry.framework.checks:
                        verdicts = by_run.setdefault(result.run_id, {})
                        verdicts[result.check_id] = result.status.value.upper()
            labels = {run.run.run_id: _label(run) for run in _runs(path)}
            for run_id, verdicts in sorted(by_run.items(), key=lambda item: labels[item[0]]):
                shown = ", ".join(
                    f"{check} {verdicts[check]}"
                    for check in entry.framework.checks
                    if check in verdicts
                )
                lines.append(f"| `{entry.file_name(case)}` | {labels[run_id]} | {shown} |")
    return "\n".join(lines) + "\n"


def _label(run: AgentRun) -> str:
    """A run as the places table names it: its service, and whether it is a fragment."""
    return f"{run.service or '?'}{' (fragment)' if run.fragment is not None else ''}"


def between(text: str, begin: str = BEGIN, end: str = END) -> str | None:
    """The table now between a page's markers, or None when they are missing."""
    start, stop = text.find(begin), text.find(end)
    if start < 0 or stop < start:
        return None
    return text[start + len(begin) : stop].strip("\n") + "\n"


def in_readme(text: str) -> str | None:
    """The table now between the page's markers, or None when they are missing."""
    return between(text)


def _write(page: Path, begin: str, end: str, current: str) -> bool:
    text = page.read_text(encoding="utf-8")
    if between(text, begin, end) is None:
        print(f"error: {page} has no {begin} ... {end} markers", file=sys.stderr)
        return False
    start, stop = text.find(begin) + len(begin), text.find(end)
    page.write_text(text[:start] + "\n" + current + text[stop:], encoding="utf-8")
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--places", action="store_true", help="the places table instead")
    parser.add_argument(
        "--write", action="store_true", help="update docs/frameworks.md and the places page"
    )
    args = parser.parse_args(argv)
    if not args.write:
        sys.stdout.write(places_table() if args.places else table())
        return 0
    written = _write(README, BEGIN, END, table())
    written = _write(PLACES_PAGE, PLACES_BEGIN, PLACES_END, places_table()) and written
    return 0 if written else 2


if __name__ == "__main__":
    raise SystemExit(main())
