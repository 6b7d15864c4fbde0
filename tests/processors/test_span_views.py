"""span_views: which spans under a model-inference span are the model's own transport.

Only the request to the model is: an HTTP or RPC span that went to the server the model
span names, or, where it names none, the model span's own child. Hand-built spans.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from recorded import TRACES
from span_factory import mk, span

from rampart_otel.conventions import Gate, ModelOutput, openinference
from rampart_otel.conventions.registry import BY_SCOPE, GENERAL
from rampart_otel.model import Event, InputError, Scope, Span
from rampart_otel.processors import span_views
from rampart_otel.processors.span_views import (
    SpanRecord,
    classify,
    history_readers,
    input_readers,
    read_span,
    run_readings,
)
from rampart_otel.receivers.files import read_paths
from rampart_otel.run_graph import RunGraph

MODEL_URL = "http://127.0.0.1:4000/v1/chat/completions"


def chat(**extra: Any) -> dict[str, Any]:
    return {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m", **extra}


def http(url: str) -> dict[str, Any]:
    return {"http.request.method": "POST", "url.full": url}


def sql(statement: str) -> dict[str, Any]:
    return {"db.system.name": "sqlite", "db.query.text": statement}


def transport(*spans: Span) -> dict[str, bool]:
    views = classify(RunGraph(list(spans))).records
    return {v.span.span_id: bool(v.in_model) for v in views if not v.model}


def view(spans: list[Span], span_id: str) -> SpanRecord:
    views = classify(RunGraph(spans)).records
    return next(v for v in views if v.span.span_id == span_id)


def test_a_request_to_the_server_the_model_span_names_is_transport() -> None:
    model = mk("m1", "chat m", chat(**{"server.address": "127.0.0.1", "server.port": 4000}))
    assert transport(
        model,
        mk("h1", "POST", http(MODEL_URL), parent="m1", kind="CLIENT"),
        mk("h2", "POST", http("http://127.0.0.2:4000/upload"), parent="m1", kind="CLIENT"),
        mk("h3", "POST", http("http://127.0.0.1:9999/upload"), parent="m1", kind="CLIENT"),
    ) == {"h1": True, "h2": False, "h3": False}


def test_the_base_url_names_the_server_too() -> None:
    model = mk("m1", "chat m", chat(**{"gen_ai.openai.api_base": "http://127.0.0.1:4000/v1"}))
    assert transport(
        model,
        mk("h1", "POST", http(MODEL_URL), parent="m1", kind="CLIENT"),
        mk("h2", "GET", http("http://localhost:4001/weather"), parent="m1", kind="CLIENT"),
    ) == {"h1": True, "h2": False}


def test_a_sql_statement_is_never_transport() -> None:
    model = mk("m1", "chat m", chat(**{"server.address": "127.0.0.1"}))
    plain = mk("m2", "chat m", chat())
    assert transport(
        model,
        plain,
        mk("d1", "DROP", sql("DROP TABLE notes"), parent="m1", kind="CLIENT"),
        mk("d2", "DROP", sql("DROP TABLE notes"), parent="m2", kind="CLIENT"),
    ) == {"d1": False, "d2": False}


def test_a_model_span_naming_no_server_has_only_its_own_child_as_transport() -> None:
    """The instrumentation's own HTTP child (and a request nested in it, requests over
    urllib3) is the model's; a request under a span of the agent's under it is not."""
    assert transport(
        mk("m1", "chat m", chat()),
        mk("h1", "POST", http(MODEL_URL), parent="m1", kind="CLIENT"),
        mk("h2", "POST", http(MODEL_URL), parent="h1", kind="CLIENT"),
        mk("g1", "send_report", {}, parent="m1"),
        mk("h3", "POST", http("http://127.0.0.2/upload"), parent="g1", kind="CLIENT"),
    ) == {"h1": True, "h2": True, "g1": False, "h3": False}


def test_a_callers_span_holding_model_calls_lends_no_transport() -> None:
    """A framework that writes a model call's attributes onto the caller's span (LiteLLM's
    callback, under an active span) does not make that span's other children the model's."""
    assert transport(
        mk("r1", "agent run", chat(), scope="my-agent"),
        mk("m2", "raw request", chat(), parent="r1"),
        mk("h1", "POST", http("http://127.0.0.2/upload"), parent="r1", kind="CLIENT"),
    ) == {"h1": False}
    hidden = {"hidden_params": json.dumps({"api_base": "http://127.0.0.1:4000/v1"})}
    assert transport(
        mk("r1", "agent run", chat(**hidden), scope="my-agent"),
        mk("h1", "GET", http("http://localhost:4001/weather"), parent="r1", kind="CLIENT"),
        mk("h2", "POST", http(MODEL_URL), parent="r1", kind="CLIENT"),
    ) == {"h1": False, "h2": True}


def test_a_layer_of_the_call_may_name_the_server() -> None:
    """pydantic-ai's chat span around another instrumentation's span of the same request."""
    spans = [
        mk("m1", "chat m", chat(**{"server.address": "127.0.0.1", "server.port": 4000})),
        mk("m2", "inner", chat(), parent="m1"),
        mk("h1", "POST", http(MODEL_URL), parent="m2", kind="CLIENT"),
        mk("h2", "POST", http("http://127.0.0.2/upload"), parent="m2", kind="CLIENT"),
    ]
    assert view(spans, "h1").in_model and not view(spans, "h2").in_model


def test_an_unknown_genai_looking_span_is_not_understood_with_its_scope() -> None:
    """Spans of no family a convention reads, carrying gen_ai.*, llm.*, traceloop.* or a
    trace store's observation keys, are named with their scope, never skipped."""
    spans = [
        mk("s1", "a", {"gen_ai.thing": "x"}, scope="acme.genai"),
        mk("s2", "b", {"llm.thing": "x"}, scope="acme.llm"),
        mk("s3", "c", {"traceloop.thing": "x"}, scope="acme.tl"),
        mk("s4", "d", {"acme.observation.input": "x"}, scope="acme.store"),
        mk("s5", "e", {"observation.output": "x"}, scope=""),
    ]
    views = classify(RunGraph(spans)).records
    notes = {v.span.span_id: list(v.not_understood) for v in views}
    assert notes == {
        "s1": ["a gen_ai span of scope 'acme.genai' no reader knows"],
        "s2": ["a llm.* span of scope 'acme.llm' no reader knows"],
        "s3": ["a OpenLLMetry span of scope 'acme.tl' no reader knows"],
        "s4": ["a trace-store observation span of scope 'acme.store' no reader knows"],
        "s5": [
            "a trace-store observation span of scope 'unnamed' no reader knows",
            # its scope unnamed, it is also read as each scope a reading depends on
            "no scope in the OTLP data (an empty scope name); it reads otherwise as openlit",
        ],
    }


def test_a_span_with_an_unnamed_scope_is_read_as_a_lost_scope() -> None:
    """OpenAI Agents' instrumentation says 'stop' of a response that asked for tools; with
    no scope name, the span may be its, so 'stop' does not prove no tool was asked for."""
    attrs = {"openinference.span.kind": "LLM", "llm.finish_reason": "stop"}
    named, unnamed = (
        mk("m1", "response", attrs, scope="openinference.instrumentation.openai_agents"),
        mk("m2", "response", attrs, scope=""),
    )
    views = {v.span.span_id: v for v in classify(RunGraph([named, unnamed])).records}
    assert views["m1"].not_understood == ()
    assert any("an empty scope name" in note for note in views["m2"].not_understood)


def test_records_are_frozen_and_classifying_changes_no_reading() -> None:
    """Unreadable sibling layers of one call: the first stands for it with both layers'
    finish reasons, in a record of its own; the reading the conventions made is untouched,
    so classifying the same readings again gives the same records."""
    m1 = mk("m1", "chat", chat(**{"gen_ai.response.id": "r1"}), end=10)
    m2 = mk("m2", "chat", chat(**{"gen_ai.response.id": "r1"}), start=1, end=9)
    m2.attributes["gen_ai.response.finish_reasons"] = ["tool_calls"]
    m2.scope = Scope("sdk")
    first = classify(RunGraph([m1, m2]))
    one, two = first.records
    assert one.layers == ("m2",) and two.read_through and not one.read_through
    assert one.output is not None and one.output.finish_reasons == ["tool_calls"]
    assert one.reading.output is not None and one.reading.output.finish_reasons == []
    again = classify(first.graph, run_readings(first))
    assert [r.reading for r in again.records] == [r.reading for r in first.records]
    assert [r.output.finish_reasons for r in again.records if r.output] == [["tool_calls"]] * 2
    with pytest.raises(AttributeError):
        one.model = False  # type: ignore[misc]
    with pytest.raises(AttributeError):
        first.records = ()  # type: ignore[misc]


def test_a_reading_is_reused_only_for_the_very_span_it_was_made_of() -> None:
    span = mk("m1", "chat", chat())
    reading = read_span(span)
    assert read_span(span, {"m1": reading}) is reading
    resent = mk("m1", "chat", chat())
    assert read_span(resent, {"m1": reading}) is not reading


def test_a_caller_span_holding_the_calls_own_spans_is_no_model_call() -> None:
    """A hand-built graph: the reading says model (a caller's span LiteLLM wrote onto);
    the graph shows it holds a model span, so its record is no model call."""
    outer = mk("c0", "caller", end=100)
    inner = mk("m1", "chat", chat(), parent="c0", start=1)
    run = classify(RunGraph([outer, inner]))
    reading = run.records[0].reading._replace(model=True, caller=True)
    record = classify(run.graph, {"c0": reading, "m1": run.records[1].reading}).records[0]
    assert reading.model and not record.model and record.holds_work and record.caller


# ---- gates: each convention reads only the spans its keys call for ----------------------


def _recorded_spans() -> list[Span]:
    found: list[Span] = []
    for path in sorted(TRACES.rglob("*.jsonl")):
        for item in read_paths([path]):
            assert not isinstance(item, InputError), item
            found.extend(item)
    return found


def _passes(gate: Gate | None, span: Span) -> bool:
    if gate is None:
        return True
    scope = span.scope.name
    return (
        any(key in span.attributes for key in gate.keys)
        or any(scope == s or scope.startswith(s + ".") for s in gate.scopes)
        or (gate.events and bool(span.events))
    )


def test_no_gate_hides_a_report_on_any_recorded_span() -> None:
    """A gate is a promise that its reader says nothing of the spans it keeps out: on every
    recorded span, a general convention whose gate keeps the span out reports nothing."""
    spans = _recorded_spans()
    assert len(spans) > 1000
    kept_out = 0
    for recorded in spans:
        for convention in GENERAL:
            if not _passes(convention.read_gate, recorded):
                kept_out += 1
                assert convention.read(recorded) is None, (convention.name, recorded.name)
            if convention.history is not None and not _passes(convention.history_gate, recorded):
                assert convention.history(recorded)[:2] == ({}, {}), (
                    convention.name,
                    recorded.name,
                )
            if convention.user_input is not None and not _passes(convention.input_gate, recorded):
                assert convention.user_input(recorded) is None, (convention.name, recorded.name)
    assert kept_out > len(spans)  # the gates keep most conventions off most spans


def test_a_span_is_read_by_the_conventions_its_keys_call_for_only() -> None:
    plain = mk("s1", "GET", http(MODEL_URL))
    oi = mk("s2", "llm", {"openinference.span.kind": "LLM"})
    events = mk("s3", "chat", {}, events=[Event("gen_ai.choice", 1, {})])
    assert [name for name, _ in history_readers(plain)] == []
    assert [name for name, _ in history_readers(oi)] == ["openinference"]
    assert [name for name, _ in history_readers(events)] == ["gen_ai"]
    assert input_readers(plain) == ()
    assert input_readers(oi) == (openinference.user_input,)
    litellm = span("completion", {}, scope="litellm")
    assert "litellm" in [name for name, _ in history_readers(litellm)]


def test_a_gated_reading_is_the_full_reading() -> None:
    """Reading a span through the gates changes nothing of what is read of it."""
    for recorded in _recorded_spans():
        gated = read_span(recorded)
        if recorded.scope.name in BY_SCOPE:
            continue
        every = [c.read(recorded) for c in GENERAL]
        assert gated.readers == tuple(r.convention for r in every if r is not None)


@pytest.mark.parametrize(
    "output",
    [
        ModelOutput(readable=True, text="hi", text_captured=True, finish_reasons=["stop"]),
        ModelOutput(readable=True, text="not captured", finish_reasons=["stop"]),
        ModelOutput(readable=True, finish_reasons=["tool_calls", "tool_calls"]),
        ModelOutput(readable=False, text="x", text_captured=True, provider=""),
        ModelOutput(readable=False, finish_reasons=["length"], response_id="r1", source="s"),
        ModelOutput(readable=False, not_understood=["part type 'x'"], convention="gen_ai"),
    ],
)
def test_one_conventions_output_reads_as_merged_alone(output: ModelOutput) -> None:
    """A span one convention reads keeps that convention's output object only where
    merging it alone would give the same output."""

    def fields(o: ModelOutput) -> tuple[Any, ...]:
        return (
            o.readable,
            o.text,
            o.text_captured,
            list(o.requests),
            list(o.finish_reasons),
            o.convention,
            o.provider,
            o.source,
            list(o.not_understood),
            o.response_id,
        )

    assert fields(span_views._merged_alone(output)) == fields(span_views._merge_outputs([output]))
