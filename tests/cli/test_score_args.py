"""A plain ``score`` command line read without typer (cli_score_args) gives ``score`` what
typer gives it, and ends as typer ends it; anything else is left to typer (issue 46)."""

from __future__ import annotations

import errno
from pathlib import Path
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from rampart_otel import cli, cli_app
from rampart_otel.cli_score_args import DEFAULTS, FLAGS, REPEATED, VALUED, score_arguments

REPO = Path(__file__).resolve().parents[2]
TRACES, POLICY = str(REPO / "samples" / "traces"), str(REPO / "samples" / "policy.yaml")

READ_WITHOUT_TYPER = [
    ["score", TRACES, "--policy", POLICY],
    ["score", "--policy", POLICY, TRACES, "-", "a b", "--format", "json"],
    ["score", TRACES, "--policy=" + POLICY, "--format=jsonl", "-o", "out.json"],
    ["score", TRACES, "--policy", POLICY, "--output", "-", "--group-by", "session"],
    ["score", TRACES, "--policy", POLICY, "--assume-coverage", "a", "--assume-coverage=b"],
    ["score", TRACES, "--policy", POLICY, "--fail-on", "undetermined", "-j", "2"],
    ["score", TRACES, "--policy", POLICY, "--jobs", " 3", "--limit", "+4", "--jobs=0"],
    ["score", TRACES, "--policy", POLICY, "--stitch", "--no-stitch", "--allow-empty", "-v"],
    ["score", TRACES, "--policy", POLICY, "--no-stitch", "--stitch", "--verbose"],
    ["score", TRACES, "--policy", POLICY, "--annotate", "--follow", "--show-secrets"],
    ["score", TRACES, "--policy", POLICY, "--since", "1d", "--until", "2024-01-01"],
    ["score", TRACES, "--policy", POLICY, "--state", "s.json", "--format", "x", "--policy", "p"],
    ["score", TRACES, "--policy", "", "--format=", "--since="],
    ["score", TRACES, "--policy", POLICY, "--limit=-1"],
]

LEFT_TO_TYPER = [
    [],
    ["--version"],
    ["scor", TRACES, "--policy", POLICY],
    ["inspect", TRACES],
    ["score"],
    ["score", TRACES],  # the policy from RAMPART_OTEL_POLICY, or typer's usage error
    ["score", "--policy", POLICY],
    ["score", TRACES, "--policy", POLICY, "--help"],
    ["score", TRACES, "--policy", POLICY, "--bogus"],
    ["score", TRACES, "--policy", POLICY, "--"],
    ["score", TRACES, "--policy"],
    ["score", TRACES, "--policy", "--format", "json"],
    ["score", TRACES, "--policy", POLICY, "-vj2"],
    ["score", TRACES, "--policy", POLICY, "-j2"],
    ["score", TRACES, "--policy", POLICY, "-o=out"],
    ["score", TRACES, "--policy", POLICY, "--jobs", "two"],
    ["score", TRACES, "--policy", POLICY, "--limit", "-1"],  # a value that looks like an option
    ["score", TRACES, "--policy", POLICY, "--verbose=yes"],
    ["score", TRACES, "--policy", POLICY, "--poll", "5"],
    ["score", TRACES, "--policy", POLICY, "--settle=1"],
    ["score", TRACES + "\0", "--policy", POLICY],
    ["score", TRACES, "--policy", POLICY + "\0"],
]


def typer_arguments(args: list[str], monkeypatch: pytest.MonkeyPatch) -> dict[str, Any] | None:
    """What typer passes to ``score_command`` for ``args``, or None: typer stopped first."""
    passed: list[dict[str, Any]] = []
    monkeypatch.setattr(cli_app, "score_command", lambda **kwargs: passed.append(kwargs))
    monkeypatch.delenv("RAMPART_OTEL_POLICY", raising=False)
    CliRunner().invoke(cli_app.app, args)
    return passed[0] if passed else None


@pytest.mark.parametrize("args", READ_WITHOUT_TYPER)
def test_a_plain_score_is_read_as_typer_reads_it(
    args: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    read = score_arguments(args, environ={})
    assert read is not None
    assert read == typer_arguments(args, monkeypatch)


@pytest.mark.parametrize("args", LEFT_TO_TYPER)
def test_any_other_command_line_is_left_to_typer(args: list[str]) -> None:
    assert score_arguments(args, environ={}) is None


def test_a_path_typer_refuses_is_left_to_typer(monkeypatch: pytest.MonkeyPatch) -> None:
    """An existing file this process cannot read: typer's "is not readable" error."""
    monkeypatch.setattr("os.access", lambda path, mode: path != POLICY)
    args = ["score", TRACES, "--policy", POLICY]
    assert typer_arguments(args, monkeypatch) is None
    assert score_arguments(args, environ={}) is None


def test_a_completion_request_is_left_to_typer() -> None:
    args = ["score", TRACES, "--policy", POLICY]
    assert score_arguments(args, environ={"_RAMPART_OTEL_COMPLETE": "bash_source"}) is None


def test_every_option_of_score_is_read_or_left_to_typer() -> None:
    """An option added to ``cli_app.score`` is read here, or listed as typer's alone; its
    default is the one typer passes."""
    group = typer.main.get_command(cli_app.app)
    command = group.commands["score"]  # type: ignore[attr-defined]
    options = {
        name
        for param in command.params
        if param.param_type_name == "option"
        for name in (*param.opts, *param.secondary_opts)
    }
    assert options == {*VALUED, *REPEATED, *FLAGS, "--poll", "--settle"}
    defaults = {param.name for param in command.params} - {"paths", "policy", "help"}
    assert defaults == set(DEFAULTS)


@pytest.mark.parametrize(
    ("raised", "code"),
    [(None, 0), (EOFError(), 1), (KeyboardInterrupt(), 130), (OSError(errno.EPIPE, "pipe"), 1)],
)
def test_a_score_read_without_typer_ends_as_typer_ends_it(
    raised: BaseException | None,
    code: int,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    """Returned, end of input, Ctrl-C, a closed pipe: the same exit code and messages."""

    def command(**kwargs: Any) -> None:
        if raised is not None:
            raise raised

    monkeypatch.setattr(cli, "score_command", command)
    monkeypatch.setattr(cli_app, "score_command", command)
    ended = []
    for environment in ({}, {"RAMPART_OTEL_POLICY": POLICY}):  # without typer, then typer
        monkeypatch.setattr("sys.argv", ["rampart-otel", "score", TRACES, "--format", "json"])
        for name, value in environment.items():
            monkeypatch.setenv(name, value)
        if not environment:
            monkeypatch.setattr("sys.argv", [*cli.sys.argv, "--policy", POLICY])
        with monkeypatch.context() as streams:  # a closed pipe replaces them
            streams.setattr("sys.stdout", cli.sys.stdout)
            streams.setattr("sys.stderr", cli.sys.stderr)
            with pytest.raises(SystemExit) as exit_:
                cli.main()
        ended.append((exit_.value.code, capsys.readouterr()))
    assert ended[0] == ended[1]
    assert ended[0][0] == code
