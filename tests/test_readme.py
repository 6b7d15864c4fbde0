"""The README's worked example runs as written and prints what the README shows."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def console_blocks() -> list[list[str]]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    return [block.splitlines() for block in re.findall(r"```console\n(.*?)```", text, re.S)]


def test_worked_example_output_matches_the_readme() -> None:
    (block,) = console_blocks()
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
