"""side_effects: the model's transport is only what went to the model, on every recorded
sample (every reason of every run read), and a request elsewhere is the agent's."""

from __future__ import annotations

import pytest
from recorded import TRACES, runs, spans
from span_factory import mk

from rampart_otel.conventions.side_effects import HTTP, TRANSPORT_KINDS
from rampart_otel.processors.side_effects import agent_side_effects
from rampart_otel.processors.span_views import classify
from rampart_otel.processors.tool_calls import merge_tool_calls
from rampart_otel.processors.turns import Turns
from rampart_otel.run_graph import RunGraph
from rampart_otel.vocabulary import NETWORK_CONNECT

SAMPLES = sorted(str(p.relative_to(TRACES).with_suffix("")) for p in TRACES.rglob("*.jsonl"))
# Where the recorders put things: the scripted model on 127.0.0.1, the tools' services on
# localhost and 127.0.0.2, their SQL on a local SQLite file.
MODEL_HOST = "127.0.0.1"
TRANSPORT = "model's own transport"


@pytest.mark.parametrize("name", SAMPLES)
def test_no_reason_calls_a_request_elsewhere_the_models_transport(name: str) -> None:
    for run in runs(name):
        for key, channel in run.coverage.channels.items():
            for reason in channel.reasons:
                if TRANSPORT in reason:
                    assert key in {f"side_effects.{kind}" for kind in TRANSPORT_KINDS}, (
                        key,
                        reason,
                    )
    by_trace: dict[str, list] = {}
    for span in spans(name):
        by_trace.setdefault(span.trace_id, []).append(span)
    for found in by_trace.values():
        views = classify(RunGraph(found)).records
        for view in views:
            if view.in_model and not view.model:
                # A request, or the watcher's connection it went over (docs/watch.md)
                assert [kind for kind, *_ in view.effects] in ([HTTP], [NETWORK_CONNECT])
                ((_, details, *_),) = view.effects
                assert details["host"] == MODEL_HOST, (view.span.name, details["url"])


def test_litellm_tools_under_the_callers_span_are_the_agents() -> None:
    """LiteLLM writes each completion's attributes onto the caller's span: the tools' GET,
    POST and INSERT under it are side effects, never the model's transport."""
    (run,) = runs("litellm/litellm-exfil")
    assert sorted(e.kind for e in run.side_effects) == ["db_query", HTTP, HTTP]
    assert not any(TRANSPORT in r for c in run.coverage.channels.values() for r in c.reasons)


def test_a_lost_request_to_a_model_api_while_one_model_call_ran_is_its_transport() -> None:
    from span_factory import mk

    from rampart_otel.model import Run
    from rampart_otel.normalize import normalize

    llm = {"openinference.span.kind": "LLM"}

    def post(span_id: str, url: str, start: int) -> object:
        attrs = {"http.request.method": "POST", "url.full": url}
        return mk(span_id, "POST", attrs, kind="CLIENT", trace_id="f" * 32, start=start)

    spans = [
        mk("a0", "agent", {"openinference.span.kind": "AGENT"}, start=0, end=100),
        mk("m1", "ChatOpenAI", llm, parent="a0", start=10, end=20),
        mk("m2", "ChatOpenAI", llm, parent="a0", start=15, end=30),
        post("h1", "http://127.0.0.1:9/v1/chat/completions", 11),  # m1 alone: transport
        post("h2", "http://127.0.0.2:9/upload", 12),  # not a model API: the agent's
        post("h3", "http://127.0.0.1:9/v1/chat/completions", 16),  # m1 and m2: unproven
    ]
    run = normalize(Run("t", ["t", "f" * 32], spans))
    assert sorted(e.span_id for e in run.side_effects) == ["h2", "h3"]


def test_on_a_hand_built_graph_effects_belong_to_the_call_that_holds_them() -> None:
    """The job alone, on a hand-built graph: a POST under the tool's execution span is that
    call's; one beside it is no call's; the model's own request is transport, left out."""
    llm = {
        "openinference.span.kind": "LLM",
        "llm.output_messages.0.message.tool_calls.0.tool_call.id": "c1",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "send",
        "server.address": "127.0.0.1",
        "server.port": 4000,
    }
    tool = {"openinference.span.kind": "TOOL", "tool.name": "send", "tool_call.id": "c1"}

    def post(url: str) -> dict[str, str]:
        return {"http.request.method": "POST", "url.full": url}

    graph = RunGraph(
        [
            mk("a0", "agent", {"openinference.span.kind": "AGENT"}, end=100),
            mk("m1", "llm", llm, parent="a0", start=1, end=10),
            mk("x1", "POST", post("http://127.0.0.1:4000/v1/chat"), parent="m1", start=2),
            mk("t1", "send", tool, parent="a0", start=20, end=30),
            mk("h1", "POST", post("https://evil.example/up"), parent="t1", start=21),
            mk("h2", "POST", post("https://elsewhere.example/"), parent="a0", start=40),
        ]
    )
    run = classify(graph)
    calls = merge_tool_calls(run)
    made = agent_side_effects(run, calls, Turns(frozenset(), [], []))
    assert [(e.span_id, e.tool_call_index) for e in made.effects] == [("h1", 0), ("h2", None)]
    assert {kind: [s.span_id for s in spans] for kind, spans in made.transport.items()} == {
        HTTP: ["x1"]
    }
    assert made.windowed == set()
