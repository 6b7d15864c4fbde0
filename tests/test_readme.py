"""The README is a front page that holds: at most 250 lines, its agent runs as written and
gives its verdict with ``rampart_otel.setup(...)`` as the only tracing code, and every link
of it and of the docs resolves. The pages the rest moved to keep their examples running:
docs/worked-example.md's output is what ``score`` prints, docs/python-api.md's code runs,
docs/pytest.md's files pass and fail as it says."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from plugin_runner import isolate, run_pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
DOCS = REPO / "docs"


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def test_the_readme_is_a_front_page() -> None:
    text = read(README)
    assert len(text.splitlines()) <= 250
    (quick_start,) = re.findall(r"## Quick start\n.*?```sh\n(.*?)```", text, re.S)
    commands = [line.split("#")[0].strip() for line in quick_start.splitlines()]
    assert commands == ["make demo", "make test"]  # exactly the two commands
    assert "pip install " in text
    assert "## Runtime dependencies" in text  # why each runtime dependency is there
    assert (DOCS / "index.md").is_file()


def readme_agent() -> str:
    return re.findall(r"```python\n(.*?)```", read(README), re.S)[0]


def test_the_readme_agent_is_twenty_lines_traced_by_setup_alone() -> None:
    code = readme_agent()
    assert len([line for line in code.splitlines() if line.strip()]) <= 20
    assert "rampart_otel.setup(" in code
    assert "opentelemetry" not in code and "Instrumentor" not in code and "tracer" not in code


def test_the_readme_agent_runs_as_written_and_gives_its_verdict(tmp_path: Path) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(readme_agent(), encoding="utf-8")
    ran = subprocess.run(
        [sys.executable, str(agent)],
        capture_output=True, text=True, cwd=tmp_path, timeout=180,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    (setup_line,) = ran.stderr.splitlines()
    assert setup_line.startswith("rampart-otel: tracing to run.jsonl; instrumented: ")
    assert "sqlite3 (cursors only: Connection.execute is not traced)" in setup_line
    verdicts = dict(reversed(line.split(" ", 1)) for line in ran.stdout.splitlines())
    assert verdicts["destructive-actions.sql"] == "UNSAFE"  # the DROP TABLE, seen
    assert verdicts["egress.non-allowed-host"] == "UNDETERMINED"  # no request: not SAFE
    shown = re.findall(r"```text\n(.*?)```", read(README), re.S)[0].splitlines()
    for line in shown[1:]:
        assert line == "..." or line in ran.stdout.splitlines(), line


# -- links -----------------------------------------------------------------------------------

_LINK = re.compile(r"\]\(([^)\s]+)\)")


def slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", read(path), flags=re.S)
    return {slug(h) for h in re.findall(r"^#+ (.*)$", text, re.M)}


def pages() -> list[Path]:
    return [README, REPO / "CONTRIBUTING.md", *sorted(DOCS.rglob("*.md"))]


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.relative_to(REPO)))
def test_every_link_resolves(page: Path) -> None:
    text = re.sub(r"```.*?```", "", read(page), flags=re.S)
    broken = []
    for target in _LINK.findall(text):
        if re.match(r"[a-z]+:", target):  # http(s), mailto: not checked offline
            continue
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        if not resolved.exists():
            broken.append(f"{target}: no such file")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            broken.append(f"{target}: no heading #{anchor}")
    assert broken == []


def test_the_docs_index_lists_every_page() -> None:
    index = read(DOCS / "index.md")
    listed = set(_LINK.findall(index))
    for page in sorted(DOCS.glob("*.md")):
        if page.name != "index.md":
            assert page.name in listed, f"docs/index.md does not list {page.name}"


# -- the pages the README's sections moved to ------------------------------------------------


def console_blocks() -> list[list[str]]:
    text = read(DOCS / "worked-example.md")
    return [block.splitlines() for block in re.findall(r"```console\n(.*?)```", text, re.S)]


@pytest.mark.parametrize("block", console_blocks(), ids=lambda block: block[0][:60])
def test_worked_example_output_matches_the_page(block: list[str]) -> None:
    command_lines = []
    for line in block:
        command_lines.append(line.removeprefix("$ ").rstrip("\\").strip())
        if not line.endswith("\\"):
            break
    argv = shlex.split(" ".join(command_lines))
    assert argv[0] == ".venv/bin/rampart-otel"
    proc = subprocess.run(
        [sys.executable, "-m", "rampart_otel.cli", *argv[1:]],
        capture_output=True, text=True, cwd=REPO, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 1  # the page says so: a verdict failed
    shown = [line for line in block[len(command_lines) :] if line != "..."]
    printed = proc.stdout.splitlines()
    assert printed[: len(shown)] == shown


def test_python_api_example_runs_as_written() -> None:
    code = "\n".join(re.findall(r"```python\n(.*?)```", read(DOCS / "python-api.md"), re.S))
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) > 50 and all(line.startswith("no-exfiltration ") for line in lines)
    assert {line.split()[1] for line in lines} >= {"safe", "unsafe", "undetermined"}


@pytest.mark.slow
def test_pytest_example_runs_as_written(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The page's files, written out and run by pytest with the plugin, do what it says."""
    section = read(DOCS / "pytest.md")
    files = dict(re.findall(r"```\w+ file=(\S+)\n(.*?)```", section, re.S))
    assert set(files) == {
        "policy.yaml",
        "test_weather_agent.py",
        "test_sdk_agent.py",
        "test_agent_process.py",
    }
    for name, body in files.items():
        (pytester.path / name).write_text(body, encoding="utf-8")
    result = run_pytest(isolate(pytester, monkeypatch))
    outcomes = result.parseoutcomes()
    # The page: the exfil test fails, the others (the plain SDK agent's, which finds its
    # exfiltration in one run, and the two processes) pass.
    assert (outcomes.get("passed"), outcomes.get("failed")) == (4, 1), result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "*test_sends_nothing_elsewhere*",
            "E * AssertionError: Attack detected: http_request POST http://127.0.0.2:*/upload"
            " (span *)",
        ]
    )
    (shown,) = re.findall(r"```text\n(.*?)```", section, re.S)
    result.stdout.re_match_lines(
        [f"^{re.escape(line)}$" for line in shown.splitlines() if line != "..."]
    )
