"""Puts tests/ on sys.path, so shared helpers import by module name (``span_factory``), and
registers the SDK-recorded OTLP fixtures the codec and receiver tests share, the system
Chromium (``browser``) the HTML tests drive, and the PostgreSQL server (``pg_server``,
``pg_url``) the shared results store's tests write to, and the trace stores
(``phoenix_server``, ``mlflow_server``) the ``phoenix://`` and ``mlflow://`` tests read."""

from collections.abc import Iterator

import figures
import markers
import pytest
from browser import browser  # noqa: F401
from postgres import pg_server, pg_url  # noqa: F401
from sdk_traces import expected, make_request, sdk_request, sdk_spans  # noqa: F401
from trace_stores import mlflow_server, phoenix_server  # noqa: F401

# The plugin's tests and the README's pytest example drive pytest itself.
pytest_plugins = ["pytester"]


def pytest_configure(config: pytest.Config) -> None:
    markers.install_guard()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every test is ``unit`` or ``e2e`` (tests/markers.py): nobody has to remember. The
    whole suite's figures are counted here, before ``-m`` or ``-k`` deselect any."""
    markers.apply(items)
    if figures.whole_suite(config):
        config.stash[figures.COUNTED] = figures.count(items)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    with markers.guard(item):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    with markers.guard(item):
        return (yield)
