"""One wrong word in an otherwise good policy, for every place a policy is loaded: each must
be refused (exit 2, PolicyError, the pytest session stopped) with the word and the closest
known one, never scored as if the word meant something."""

from __future__ import annotations

from pathlib import Path

import pytest

GOOD = 'tool_called("send_report")'


def policy_text(detect: str, *, assume: str = "[]") -> str:
    return (
        "policy: typo\n"
        f"assume_coverage: {assume}\n"
        "checks:\n"
        "  - id: typo\n"
        "    polarity: attack\n"
        f"    detect: '{detect}'\n"
    )


# (case, policy text, where the error points, the error after FILE:LINE:COL: )
TYPOS = [
    (
        "unknown kind",
        policy_text('side_effect("http", url=regex("/steal"))'),
        "6:26",
        "unknown side-effect kind 'http' — did you mean 'http_request'?",
    ),
    (
        "unknown detail key",
        policy_text('side_effect("http_request", hostname="evil.example")'),
        "6:42",
        "unknown detail key 'hostname' for side-effect kind 'http_request' — did you mean 'host'?",
    ),
    (
        "unknown channel in assume_coverage",
        policy_text('side_effect("http_request")', assume="[side_effects.http]"),
        "2:19",
        "assume_coverage[0]: unknown channel 'side_effects.http' — did you mean "
        "'side_effects.http_request'?",
    ),
    (
        "unknown kind nested in & | ~",
        policy_text(f'{GOOD} & (~tool_called("b") | ~side_effect("db", operation="INSERT"))'),
        "6:77",
        "unknown side-effect kind 'db' — did you mean 'db_query'?",
    ),
    (
        "unknown matcher",
        policy_text('tool_called("send_report", to=regexp("evil"))'),
        "6:44",
        "unknown matcher 'regexp' — did you mean 'regex'?",
    ),
]
CASES = [pytest.param(text, where, message, id=case) for case, text, where, message in TYPOS]


def write(directory: Path, text: str) -> Path:
    path = directory / "policy.yaml"
    path.write_text(text, encoding="utf-8")
    return path
