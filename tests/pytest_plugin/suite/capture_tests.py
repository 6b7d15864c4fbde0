"""Run by tests/pytest_plugin/test_plugin.py through pytester (as test_capture.py), in a
session where nothing sets a TracerProvider and no agent framework is imported."""

from __future__ import annotations

import sys
import threading
from typing import TYPE_CHECKING

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider

import rampart_otel.pytest_plugin

if TYPE_CHECKING:  # not at run time: the first test checks what the plugin alone loaded
    from rampart_otel.pytest_plugin.capture import AgentTrace

HEAVY = ("pydantic", "yaml", "grpc")


def test_the_plugin_is_loaded_and_has_loaded_nothing_heavy(pytestconfig: pytest.Config) -> None:
    # First in the file: no test has used the fixture yet.
    assert pytestconfig.pluginmanager.is_registered(rampart_otel.pytest_plugin)
    assert [name for name in HEAVY if name in sys.modules] == []
    assert "rampart_otel.api" not in sys.modules


def test_installs_a_provider_and_captures_every_thread(agent_trace: AgentTrace) -> None:
    assert isinstance(trace.get_tracer_provider(), TracerProvider)
    tracer = trace.get_tracer("capture")

    def work() -> None:
        with tracer.start_as_current_span("in a thread"):
            pass

    worker = threading.Thread(target=work)
    worker.start()
    worker.join()
    with tracer.start_as_current_span("in the test"):
        pass
    assert sorted(span.name for span in agent_trace.spans) == ["in a thread", "in the test"]


def test_scoring_needs_a_policy(agent_trace: AgentTrace) -> None:
    with trace.get_tracer("capture").start_as_current_span("a span"):
        pass
    agent_trace.score()


def test_scoring_nothing_fails(agent_trace: AgentTrace) -> None:
    agent_trace.score("policy.yaml")


@pytest.mark.rampart("policy.yaml", policy="policy.yaml")
def test_a_mark_takes_one_policy(agent_trace: AgentTrace) -> None:
    pass


def test_a_policy_of_the_wrong_type(agent_trace: AgentTrace) -> None:
    with trace.get_tracer("capture").start_as_current_span("a span"):
        pass
    agent_trace.score(123)  # type: ignore[arg-type]


@pytest.mark.rampart(policy=["policy.yaml"])
def test_a_marked_policy_of_the_wrong_type(agent_trace: AgentTrace) -> None:
    with trace.get_tracer("capture").start_as_current_span("a span"):
        pass
    agent_trace.assert_safe()


def test_a_grouping_that_does_not_exist(agent_trace: AgentTrace) -> None:
    with trace.get_tracer("capture").start_as_current_span("a span"):
        pass
    agent_trace.score("policy.yaml", group_by="traces")  # type: ignore[arg-type]
