"""The coverage helper reports what the real instrumentors have switched on, and nothing else."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest
from opentelemetry.instrumentation.requests import RequestsInstrumentor
from opentelemetry.sdk.resources import Resource

from rampart_otel.declare import (
    COVERAGE_ATTRIBUTE,
    HTTP,
    active_coverage,
    active_instrumentors,
    coverage_resource_attributes,
)


@pytest.fixture
def requests_instrumented(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("OTEL_PYTHON_REQUESTS_EXCLUDED_URLS", raising=False)
    monkeypatch.delenv("OTEL_PYTHON_EXCLUDED_URLS", raising=False)
    instrumentor = RequestsInstrumentor()
    was_on = instrumentor.is_instrumented_by_opentelemetry
    if not was_on:
        instrumentor.instrument()
    yield
    if not was_on:
        instrumentor.uninstrument()


def test_instrumented_requests_is_declared(requests_instrumented: None) -> None:
    assert HTTP in active_coverage()
    assert "opentelemetry.instrumentation.requests:RequestsInstrumentor" in active_instrumentors()
    assert coverage_resource_attributes()[COVERAGE_ATTRIBUTE] == active_coverage()


def test_uninstrumented_requests_is_not_declared(requests_instrumented: None) -> None:
    RequestsInstrumentor().uninstrument()
    try:
        assert HTTP not in active_coverage()
    finally:
        RequestsInstrumentor().instrument()


def test_excluded_urls_void_the_promise(
    requests_instrumented: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_PYTHON_REQUESTS_EXCLUDED_URLS", "healthz")
    assert HTTP not in active_coverage()
    assert "opentelemetry.instrumentation.requests:RequestsInstrumentor" in active_instrumentors()


def test_extra_keys_are_merged_sorted_and_deduplicated(requests_instrumented: None) -> None:
    attrs = coverage_resource_attributes(["side_effects.payment", HTTP, " side_effects.email "])
    assert attrs == {
        COVERAGE_ATTRIBUTE: ["side_effects.email", HTTP, "side_effects.payment"],
    }


@pytest.mark.parametrize("bad", ["", "   ", 3])
def test_extra_keys_must_be_strings(bad: object) -> None:
    with pytest.raises(ValueError):
        coverage_resource_attributes([bad])  # type: ignore[list-item]


def test_declaration_survives_into_the_sdk_resource(requests_instrumented: None) -> None:
    resource = Resource.create({"service.name": "t", **coverage_resource_attributes()})
    assert tuple(resource.attributes[COVERAGE_ATTRIBUTE]) == (HTTP,)


def test_unloaded_instrumentation_modules_are_not_imported() -> None:
    import sys

    assert "opentelemetry.instrumentation.kafka" not in sys.modules
    active_coverage()
    assert "opentelemetry.instrumentation.kafka" not in sys.modules


def test_importing_declare_loads_nothing_beyond_the_standard_library() -> None:
    # An agent process imports only this module: no pydantic, yaml or evaluator in it.
    code = (
        "import sys, rampart_otel.declare\n"
        "heavy = {'pydantic', 'yaml', 'rich', 'typer', 'google.protobuf'}\n"
        "print(sorted(m for m in sys.modules if m in heavy or m.startswith('rampart_otel.')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    # channels: the channel keys declare writes, lazy_regex its pattern and frozen its
    # records' constructor, all standard library only
    assert done.stdout.strip() == (
        "['rampart_otel.channels', 'rampart_otel.declare', 'rampart_otel.frozen', "
        "'rampart_otel.lazy_regex']"
    )
