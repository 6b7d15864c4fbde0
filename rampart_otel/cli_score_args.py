"""``score``'s command line read without typer, when it is plain (issue 46, start-up).

typer and click cost each process ~15 ms of CPU before its first span: importing them, then
building the command. Most ``score`` command lines are plain: known options, each with its
value, and the paths. Those are read here into the arguments typer would pass
(``cli_common.score_command``); anything else (``--help``, an unknown or mistyped option, a
value missing or that typer would refuse, a completion request, the policy from the
environment, ``--follow``'s timing) is left to typer, whose usage, help and errors stay the
only ones. tests/cli/test_score_args.py holds both readings equal.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any


def _path(value: str) -> Path | None:
    """A path as typer's ``Path`` takes it, or None where typer refuses it (an existing
    file this process cannot read) or would fail unlike a usage error."""
    if "\0" in value:
        return None
    try:
        os.stat(value)
    except OSError:
        return Path(value)
    return Path(value) if os.access(value, os.R_OK) else None


def _int(value: str) -> int | None:
    try:
        return int(value)
    except ValueError:
        return None


# Options with a value: the parameter each sets, read by the same conversion as typer's.
VALUED: Mapping[str, tuple[str, Callable[[str], Any]]] = {
    "--policy": ("policy", _path),
    "--format": ("output_format", str),
    "-o": ("output", _path),
    "--output": ("output", _path),
    "--group-by": ("group_by", str),
    "--fail-on": ("fail_on", str),
    "-j": ("jobs", _int),
    "--jobs": ("jobs", _int),
    "--since": ("since", str),
    "--until": ("until", str),
    "--limit": ("limit", _int),
    "--state": ("state", _path),
}
REPEATED = {"--assume-coverage": "assume_coverage"}
FLAGS = {
    "--stitch": ("stitch", True),
    "--no-stitch": ("stitch", False),
    "--allow-empty": ("allow_empty", True),
    "-v": ("verbose", True),
    "--verbose": ("verbose", True),
    "--annotate": ("annotate", True),
    "--follow": ("follow", True),
    "--show-secrets": ("show_secrets", True),
}
# What typer passes for an option not given (cli_app.score's defaults).
DEFAULTS: Mapping[str, Any] = {
    "output_format": "terminal",
    "output": None,
    "group_by": "trace",
    "assume_coverage": None,
    "fail_on": "unsafe",
    "jobs": 1,
    "stitch": None,
    "allow_empty": False,
    "verbose": False,
    "since": None,
    "until": None,
    "limit": None,
    "annotate": False,
    "follow": False,
    "poll": 30.0,
    "settle": 60.0,
    "state": None,
    "show_secrets": False,
}


def score_arguments(
    args: Sequence[str], environ: Mapping[str, str] = os.environ
) -> dict[str, Any] | None:
    """``rampart-otel ARGS`` as ``score_command``'s arguments, or None: typer reads it."""
    if not args or args[0] != "score" or any(name.endswith("_COMPLETE") for name in environ):
        return None  # another command, the group's options, or click's shell completion
    found: dict[str, Any] = {}
    paths: list[str] = []
    repeated: dict[str, list[str]] = {}
    rest = list(args[1:])
    while rest:
        token = rest.pop(0)
        if "\0" in token:
            return None
        if token == "-" or not token.startswith("-"):
            paths.append(token)
            continue
        name, equals, value = token.partition("=") if token.startswith("--") else (token, "", "")
        if name in FLAGS and not equals:
            parameter, flag = FLAGS[name]
            found[parameter] = flag
            continue
        if name not in VALUED and name not in REPEATED:
            return None  # --help, --, an unknown option, a short option's cluster
        if not equals:
            if not rest or (rest[0].startswith("-") and rest[0] != "-"):
                return None  # typer names the missing value
            value = rest.pop(0)
        if name in REPEATED:
            repeated.setdefault(REPEATED[name], []).append(value)
            continue
        parameter, convert = VALUED[name]
        converted = convert(value)
        if converted is None:
            return None  # typer's message for a value it refuses
        found[parameter] = converted
    if not paths or "policy" not in found:
        return None  # typer's usage error, or the policy from RAMPART_OTEL_POLICY
    return {"paths": paths, **DEFAULTS, **found, **repeated}
