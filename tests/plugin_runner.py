"""The one way tests run pytest with the rampart plugin: pytester, in a subprocess, as a user's
``pytest`` runs, importing this checkout (and ``samples/``) under no OTEL_* settings."""

from __future__ import annotations

import os
from importlib.metadata import entry_points
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PLUGIN = "rampart_otel.pytest_plugin"


def plugin_args() -> list[str]:
    """Nothing when the package is installed with its entry point (pytest loads the plugin
    itself); else load it from this checkout, as an install that predates it would not."""
    return [] if entry_points(group="pytest11", name="rampart") else ["-p", PLUGIN]


def isolate(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    for name in list(os.environ):
        if name.startswith(("OTEL_", "OPENINFERENCE_", "TRACELOOP_")):
            monkeypatch.delenv(name)
    return pytester


def run_pytest(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(
        *plugin_args(), "-p", "no:cacheprovider", *args, timeout=600
    )
