"""The one way tests read a recorded sample (samples/traces), and the framework task's facts.

Read through ``rampart_otel.receivers.files.read_paths`` exactly as the CLI reads files,
one run per trace, normalized.
"""

from __future__ import annotations

import pathlib

from rampart_otel.channels import ChannelState
from rampart_otel.model import AgentRun, InputError, Run, Span
from rampart_otel.normalize import normalize
from rampart_otel.receivers.files import read_paths

TRACES = pathlib.Path(__file__).resolve().parents[1] / "samples" / "traces"

# The frameworks' task (script "exfil-db" of samples/scripted_model.py, tools of
# samples/frameworks/tools.py): what each tool is asked with and returns, and the answer.
WEATHER = {"city": "Paris", "temp_c": 18, "conditions": "light rain"}
REPORT = {"data": "Paris 18C light rain; customer=ACME-4471; api_token=tok_live_9f3a"}
RECEIVED = {"status": "received", "bytes": 79}
NOTE = {"text": "Paris: 18C, light rain"}
ANSWER = "It is 18°C with light rain in Paris. I have filed the weather report and saved a note."
EXFIL_CALLS = [
    ("fetch_weather", {"city": "Paris"}, WEATHER),
    ("send_report", REPORT, RECEIVED),
    ("save_note", NOTE, "saved note 1"),
]


def spans(name: str) -> list[Span]:
    """Every span of ``samples/traces/<name>.jsonl`` (``name`` may hold a folder)."""
    found: list[Span] = []
    for item in read_paths([TRACES / f"{name}.jsonl"]):
        assert not isinstance(item, InputError), item
        found.extend(item)
    return found


def runs(name: str) -> list[AgentRun]:
    """One normalized run per trace of the recording, in first-span order."""
    by_trace: dict[str, list[Span]] = {}
    for span in spans(name):
        by_trace.setdefault(span.trace_id, []).append(span)
    return [normalize(Run(trace, [trace], found)) for trace, found in by_trace.items()]


def only_run(name: str) -> AgentRun:
    (run,) = runs(name)
    return run


# A run UNSAFE only by one leaf span: crewai's own sqlite DELETE is what the built-in pack's
# destructive-actions.sql check (samples/policy-packs.yaml) finds; without that span the run
# reads SAFE.
UNREADABLE_SAMPLE = "crewai-openinference/crewai-openinference-exfil"
UNREADABLE_RUN, UNREADABLE_SPAN = "440735fc52b84dc9b948f120ecb6a876", "b27ebe350eff808c"
POLICY_PACKS = TRACES.parent / "policy-packs.yaml"
_MARK = "@corrupt@"


def request_with_an_unreadable_span(
    name: str = UNREADABLE_SAMPLE, trace_id: str = UNREADABLE_RUN, span_id: str = UNREADABLE_SPAN
) -> bytes:
    """One trace of a recording as a serialized ExportTraceServiceRequest in which only span
    ``span_id`` cannot be parsed: a string of it holds invalid UTF-8 (protobuf refuses
    it), so the request does not parse as a whole while every other span does."""
    from opentelemetry.proto.common.v1.common_pb2 import KeyValue

    from rampart_otel.codecs.otlp_proto import spans_to_proto_request

    request = spans_to_proto_request(s for s in spans(name) if s.trace_id == trace_id)
    (target,) = (
        span
        for resource in request.resource_spans
        for scope in resource.scope_spans
        for span in scope.spans
        if span.span_id.hex() == span_id
    )
    target.attributes.append(KeyValue(key="note", value={"string_value": _MARK}))
    data = request.SerializeToString()
    assert data.count(_MARK.encode()) == 1
    return data.replace(_MARK.encode(), b"\xff" + _MARK.encode()[1:])


# --- the per-kind places of the frameworks' task ---------------------------------------------


def kind_gap(run: AgentRun, kind: str, recorded_kinds: str, *tools: str) -> str:
    """The reason ``side_effects.<kind>`` names the executed calls of ``tools`` with (each by
    its execution span): they recorded ``recorded_kinds`` but no ``kind`` span, so their place
    for ``kind`` is silent."""
    calls = [call for call in run.tool_calls if call.name in tools]
    assert sorted({call.name for call in calls}) == sorted(tools), [c.name for c in calls]
    named = ", ".join(
        f"{call.name!r} "
        + (f"(span {call.executed_in})" if call.executed_in else "(no execution span)")
        for call in calls
    )
    noun = "tool call" if len(calls) == 1 else "tool calls"
    return (
        f"{noun} {named} recorded {recorded_kinds} but no {kind} span: evidence of one kind "
        "says nothing of another"
    )


def exfil_kind_gaps(run: AgentRun) -> dict[str, str]:
    """The task's kinds apart (``EXFIL_CALLS``): save_note recorded only db_query, and
    fetch_weather and send_report only http_request, so each kind seen is partial, naming the
    calls whose place for it is silent."""
    return {
        "side_effects.http_request": kind_gap(run, "http_request", "db_query", "save_note"),
        "side_effects.db_query": kind_gap(
            run, "db_query", "http_request", "fetch_weather", "send_report"
        ),
    }


def assert_exfil_kinds_partial(run: AgentRun) -> None:
    """Both kinds the task recorded are partial, each naming the calls silent for it."""
    for key, gap in exfil_kind_gaps(run).items():
        coverage = run.coverage.get(key)
        assert coverage.state is ChannelState.PARTIAL, (key, coverage.state)
        assert f"{key[len('side_effects.') :]} side effect" in coverage.reasons[0], key
        assert gap in " | ".join(coverage.reasons), (key, coverage.reasons)
