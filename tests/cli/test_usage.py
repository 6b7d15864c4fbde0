"""What the command line says about itself: a mistyped option's suggestions, each command's
help and shell completion. In-process (typer's runner): no subprocess, no file read."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from rampart_otel.cli import app


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


@pytest.mark.parametrize(
    ("typed", "offered"),
    [
        ("--bogus", None),  # click offered --jobs and --verbose: every name shares its '--'
        ("--fromat", "(Possible options: --format)"),
        ("--jobz", "(Possible options: --jobs)"),
        ("--polcy", "(Possible options: --policy, --poll)"),
    ],
)
def test_a_mistyped_option_is_offered_only_names_like_it(typed: str, offered: str | None) -> None:
    code, output = invoke("score", typed, "trace.jsonl")
    assert code == 2
    line = next(line for line in output.splitlines() if "No such option" in line)
    assert line.removeprefix("Error: ") == f"No such option: {typed}" + (
        f" {offered}" if offered else ""
    )


def test_a_mistyped_option_of_a_policy_subcommand_too() -> None:
    code, output = invoke("policy", "init", "--fromm", "x")
    assert code == 2
    assert "No such option: --fromm (Possible options: --from)" in output


def test_replay_allow_empty_says_nothing_is_sent() -> None:
    code, output = invoke("replay", "--help")
    assert code == 0
    help_text = " ".join(output.split())
    assert "Input with no span at all is no error (exit 0, nothing sent)." in help_text
    assert "nothing scored" not in help_text


def test_score_allow_empty_says_nothing_is_scored() -> None:
    code, output = invoke("score", "--help")
    assert code == 0
    assert "(exit 0, nothing scored)" in " ".join(output.split())


def test_shell_completion_is_offered() -> None:
    code, output = invoke("--help")
    assert code == 0
    assert "--install-completion" in output and "--show-completion" in output
    code, script = invoke("--show-completion", "bash")
    assert code == 0
    assert "complete -o default -F" in script and "_RAMPART_OTEL_COMPLETE" in script.upper()
