"""The README's worked example runs as written and prints what the README shows."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from plugin_runner import isolate, run_pytest

REPO = Path(__file__).resolve().parents[1]


def console_blocks() -> list[list[str]]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    return [block.splitlines() for block in re.findall(r"```console\n(.*?)```", text, re.S)]


@pytest.mark.parametrize("block", console_blocks(), ids=lambda block: block[0][:60])
def test_worked_example_output_matches_the_readme(block: list[str]) -> None:
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
    assert proc.returncode == 1  # the README says so: a verdict failed
    shown = [line for line in block[len(command_lines) :] if line != "..."]
    printed = proc.stdout.splitlines()
    assert printed[: len(shown)] == shown


def test_python_api_example_runs_as_written() -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    code = "\n".join(re.findall(r"```python\n(.*?)```", text, re.S))
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) > 50 and all(line.startswith("no-exfiltration ") for line in lines)
    assert {line.split()[1] for line in lines} >= {"safe", "unsafe", "undetermined"}


def pytest_section() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    return text.partition("\n## Testing your agent with pytest\n")[2].partition("\n## ")[0]


@pytest.mark.slow
def test_pytest_example_runs_as_written(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The section's files, written out and run by pytest with the plugin, do what it says."""
    section = pytest_section()
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
    # The README: the exfil test fails, the others (the plain SDK agent's, which finds its
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
