"""The system's Chromium (Debian's ``chromium`` package) driven by Playwright: no browser
download. Tests that need it skip with one line when it is absent; CI installs it.
``bench/bench_html.py`` and ``make screenshots`` launch it the same way."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARGS = [
    "--headless",
    "--no-sandbox",  # root in a container
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@contextmanager
def system_chromium() -> Iterator[Any]:
    """A Playwright Browser on the system's Chromium; SystemExit when there is none."""
    if CHROMIUM is None:
        raise SystemExit("chromium is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    with system_chromium() as launched:
        yield launched
