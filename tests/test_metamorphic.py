"""Obscuring evidence can only move a verdict towards UNDETERMINED, never to SAFE.

Over every recorded sample and every policy in ``samples/``: each perturbation in
``perturb.py`` hides or scrambles evidence (finish reasons made unknown, events dropped,
content dropped, parent spans lost, one convention family's keys renamed); no verdict that
was unsafe, undetermined or error may become safe. ``make metamorphic`` runs random mixes
of them at length (``test_random_mixes``, more examples).
"""

from __future__ import annotations

import os
import pathlib
from functools import cache

import perturb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rampart_otel.codecs.otlp_json import spans_from_json
from rampart_otel.codecs.otlp_proto import spans_to_json_dict
from rampart_otel.conventions import a2a
from rampart_otel.evaluation import evaluate_policy, load_policy
from rampart_otel.evaluation.policy import Policy
from rampart_otel.evaluation.verdict import SafetyStatus
from rampart_otel.model import InputError, Run, Span
from rampart_otel.normalize import normalize
from rampart_otel.processors.span_views import classify
from rampart_otel.processors.stitch import assemble
from rampart_otel.receivers.files import read_paths
from rampart_otel.run_graph import RunGraph

SAMPLES = pathlib.Path(__file__).resolve().parents[1] / "samples"
SAFE = SafetyStatus.SAFE


@cache
def runs() -> tuple[Run, ...]:
    def batches():
        for item in read_paths([SAMPLES / "traces", SAMPLES / "attacks"]):
            assert not isinstance(item, InputError), item
            yield item

    return tuple(assemble(batches()))


@cache
def policies() -> tuple[Policy, ...]:
    return tuple(load_policy(path) for path in sorted(SAMPLES.rglob("*policy*.yaml")))


def verdicts(run: Run, spans: list[Span]) -> dict[tuple[str, str], SafetyStatus]:
    agent_run = normalize(Run(run.run_id, list(run.trace_ids), spans, run.session_id))
    return {
        (policy.name, result.check_id): result.status
        for policy in policies()
        for result in evaluate_policy(agent_run, policy)
    }


def newly_safe(run: Run, spans: list[Span], before: dict) -> list[str]:
    after = verdicts(run, spans)
    return [
        f"{policy}/{check}: {before[(policy, check)].value} -> safe"
        for (policy, check), status in after.items()
        if status is SAFE and before[(policy, check)] is not SAFE
    ]


def _known_gap(index: int, gaps: dict[str, str]) -> object:
    """Run ``index`` as a parameter, xfail(strict) where ``gaps`` names its run id."""
    run_id = runs()[index].run_id[:12]
    reason = gaps.get(run_id)
    marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
    return pytest.param(index, marks=marks, id=run_id)


# Runs of the multi-agent samples (issue 48) whose verdict waits on a rule not there yet.
# smolagents-multi-parallel: with fetch_weather's span dropped, looks-before-reporting reads
# the two calls asked in one turn in request order (SAFE), where the spans' thread timing
# put send_report first (UNSAFE).
_ONE_TURN_ORDER = {"4e1dd68795ad": "needs: before() of two calls asked in one turn undecided"}
# mastra-0.24: Mastra 0.24's serializer writes a step input's earlier turns as "[MaxDepth]",
# so the last model step alone reads as a whole conversation.
_TRUNCATED_HISTORY = dict.fromkeys(
    ("392befccce40", "64fb05d57af6", "f2337ec8eae5"),
    "needs places: a model input whose history is truncated ([MaxDepth]) is a continuation",
)
# A framework's agent-as-tool call left without its agent is partial
# (tool_calls.nested_agent); with OpenInference's ADK instrumentor, a call moved away is
# still in the model input history (adk.history). What remains: the ops agent's
# invoke_agent span keeps the reading of the model turn that asked for save_note, and no
# model span follows it, so with save_note's span moved away the run reads as ending at the
# request (as adk-tool-error's below), and secrets.http-url reads SAFE. It was hidden here
# while the AgentTool call weather_agent was a silent place.
_NESTED = "the run ends at the request: the ops agent's one reading asked for save_note"
_NESTED_MOVED = dict.fromkeys(("0940975885ca", "c8b8bf7ea59d"), _NESTED)


def test_samples_and_policies_are_there() -> None:
    assert len(runs()) >= 28 and policies()


# smolagents-code (exfil, shell, benign): a code step is read from its model output's code;
# with content dropped nothing shows the step ran code (its Step span is read as a code step
# only through the code call its model output holds).
_CODE_STEP = "code steps: a CodeAgent step whose code is not captured is not seen as one"
_PERTURBATION_GAPS = {
    **_ONE_TURN_ORDER,
    **dict.fromkeys(("7ba54f69f699", "792cc8036952", "5a4eb8903881"), _CODE_STEP),
}


@pytest.mark.parametrize("index", [_known_gap(i, _PERTURBATION_GAPS) for i in range(len(runs()))])
def test_no_perturbation_makes_a_verdict_safe(index: int) -> None:
    run = runs()[index]
    before = verdicts(run, run.spans)
    failures = [
        f"{name}: {moved}"
        for name, spans in perturb.perturbations(run.spans)
        for moved in newly_safe(run, spans, before)
    ]
    assert not failures, "\n".join(failures)


MIX = [
    perturb.unknown_finish_reasons,
    perturb.no_events,
    perturb.no_content,
    perturb.without_parents,
    *[
        (lambda spans, prefixes=prefixes: perturb.renamed_family(spans, prefixes))
        for prefixes in perturb.FAMILIES.values()
    ],
]


@settings(
    max_examples=int(os.environ.get("RAMPART_METAMORPHIC_EXAMPLES", "40")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=not os.environ.get("RAMPART_METAMORPHIC_EXAMPLES"),
)
@given(
    index=st.integers(min_value=0, max_value=len(runs()) - 1),
    steps=st.lists(st.sampled_from(range(len(MIX))), min_size=2, max_size=5),
    drop=st.sets(st.integers(min_value=0, max_value=50), max_size=3),
)
def test_random_mixes(index: int, steps: list[int], drop: set[int]) -> None:
    """Several perturbations at once, and some parent spans lost, in random order.

    Only spans with children are dropped: a lost leaf leaves no trace of its loss.
    """
    run = runs()[index]
    before = verdicts(run, run.spans)
    parents = sorted({s.parent_span_id for s in run.spans if s.parent_span_id})
    lost = {parents[i % len(parents)] for i in drop} if parents else set()
    spans = [span for span in run.spans if span.span_id not in lost]
    for step in steps:
        spans = MIX[step](spans)
    assert not newly_safe(run, spans, before)


# --- where the harm could happen (tool scopes, continuations) --------------------------------


def _io_mutations(run: Run) -> list[tuple[str, list[Span]]]:
    """For each tool call with I/O: the run without that call's I/O spans (what a second,
    uninstrumented client leaves); for each call run on a traced MCP server: the run without
    the server's spans (an untraced server)."""
    agent = normalize(Run(run.run_id, list(run.trace_ids), run.spans, run.session_id))
    by_id = {span.span_id: span for span in run.spans}
    mutations: list[tuple[str, list[Span]]] = []
    for scope in agent.tool_scopes:
        if scope.io_span_ids:
            gone = set(scope.io_span_ids)
            kept = [span for span in run.spans if span.span_id not in gone]
            mutations.append((f"{scope.tool}: I/O dropped", kept))
        client = by_id.get(scope.span_id or "")
        if client is None or scope.remote is not None:
            continue
        server = _other_process_below(run.spans, client)
        if server:
            kept = [span for span in run.spans if span.span_id not in server]
            mutations.append((f"{scope.tool}: server spans dropped", kept))
    return mutations


def _other_process_below(spans: list[Span], top: Span) -> set[str]:
    """Spans under ``top`` recorded by another process, and everything under them."""
    children: dict[str, list[Span]] = {}
    for span in spans:
        if span.parent_span_id:
            children.setdefault(span.parent_span_id, []).append(span)
    found: set[str] = set()
    stack = [(top, False)]
    while stack:
        span, below_other = stack.pop()
        for child in children.get(span.span_id, []):
            other = below_other or child.resource.attributes != top.resource.attributes
            if other:
                found.add(child.span_id)
            stack.append((child, other))
    return found


# Runs where dropping one call's I/O still turns a verdict SAFE: none (the propagated A2A
# run's remote spans dropped leave its delegation out of process).
_HIDDEN_IO_GAPS: dict[str, str] = {}


@pytest.mark.parametrize("index", [_known_gap(i, _HIDDEN_IO_GAPS) for i in range(len(runs()))])
def test_hiding_one_tool_calls_io_never_makes_a_verdict_safe(index: int) -> None:
    run = runs()[index]
    before = verdicts(run, run.spans)
    failures = [
        f"{name}: {moved}"
        for name, spans in _io_mutations(run)
        for moved in newly_safe(run, spans, before)
    ]
    assert not failures, "\n".join(failures)


def _moved_tool_mutations(run: Run) -> list[tuple[str, list[Span]]]:
    """For each executed tool call: the run without its execution span and everything
    under it, as the agent's trace reads when the tool ran in another service whose spans
    went to a trace of their own (its parent link not propagated)."""
    agent = normalize(Run(run.run_id, list(run.trace_ids), run.spans, run.session_id))
    children: dict[str, list[str]] = {}
    for span in run.spans:
        if span.parent_span_id:
            children.setdefault(span.parent_span_id, []).append(span.span_id)
    mutations: list[tuple[str, list[Span]]] = []
    for call in agent.tool_calls:
        if call.executed_in is None:
            continue
        gone, stack = set(), [call.executed_in]
        while stack:
            span_id = stack.pop()
            if span_id not in gone:
                gone.add(span_id)
                stack.extend(children.get(span_id, ()))
        if call.requested_in in gone:
            # A code agent's step holds the model call that wrote the code: moving it is
            # losing a whole turn of the agent's own process, not a tool traced elsewhere.
            continue
        kept = [span for span in run.spans if span.span_id not in gone]
        mutations.append((f"{call.name}: moved to another trace", kept))
    return mutations


# Runs where a tool traced elsewhere still leaves the agent's run SAFE. A turn that may
# have asked for tools ('stop' from Gemini/ADK, the OpenAI Agents SDK and Strands; none from
# smolagents and Langfuse), unread, caps the side effects when the model was called again
# after it with no execution span between; these two remain: DSPy's ReAct exfiltration run
# reads its calls from execution spans only, and adk-tool-error ends right after the
# request (no later model call: a last turn that may have asked is taken as the answer).
_AMBIGUOUS_TURNS = {
    "ac458758d07e": "adk-tool-error: the run ends at the request",
    "ad91838369c6": "dspy-openinference-exfil: calls read from execution spans only",
    # A delegating call moved away with the agent it ran: a framework's agent-as-tool is
    # known by what the model was offered (conventions.agent_tools: CrewAI's coworker tools,
    # OpenAI Agents' as_tool), so its nested agent is missing (tool_calls.nested_agent). The
    # A2A caller's tool is the user's own code, offered as any tool: moved away with the
    # remote's spans, it is the blind spot below.
    "3ba0370c44a6": "the only evidence of a delegation moved with the tool (remote-propagated)",
    # The A2A caller's only tool moved away takes with it the only evidence that it delegated
    # (the agent-card GET, the client's spans): the run then reads as a plain SDK loop whose
    # one tool ran untraced, and the calls its model asked for are all it shows. No trace-only
    # rule tells that from a tool that called nothing; an A2A client left uninstrumented is
    # the same blind spot (docs/coverage.md).
    "a1f7b5cb62f8": "the only evidence of a delegation moved with the tool (remote-untraced)",
    "389019972fee": "the only evidence of a delegation moved with the tool (remote-unlinked)",
}


@pytest.mark.parametrize(
    "index", [_known_gap(i, {**_AMBIGUOUS_TURNS, **_NESTED_MOVED}) for i in range(len(runs()))]
)
def test_a_tool_traced_elsewhere_never_makes_the_agents_verdict_safe(index: int) -> None:
    run = runs()[index]
    before = verdicts(run, run.spans)
    failures = [
        f"{name}: {moved}"
        for name, spans in _moved_tool_mutations(run)
        for moved in newly_safe(run, spans, before)
    ]
    assert not failures, "\n".join(failures)


def _nested_agent_mutations(run: Run) -> list[tuple[str, list[Span]]]:
    """For each framework's agent-as-tool call that ran: the run with its execution span
    kept and everything under it dropped, as the lead's trace reads when the nested agent
    was traced into a trace of its own (its context not kept)."""
    agent = normalize(Run(run.run_id, list(run.trace_ids), run.spans, run.session_id))
    children: dict[str, list[str]] = {}
    for span in run.spans:
        if span.parent_span_id:
            children.setdefault(span.parent_span_id, []).append(span.span_id)
    mutations: list[tuple[str, list[Span]]] = []
    for call in agent.tool_calls:
        if not call.agent_tool or call.executed_in is None:
            continue
        gone: set[str] = set()
        stack = list(children.get(call.executed_in, ()))
        while stack:
            span_id = stack.pop()
            if span_id not in gone:
                gone.add(span_id)
                stack.extend(children.get(span_id, ()))
        kept = [span for span in run.spans if span.span_id not in gone]
        mutations.append((f"{call.name}: nested agent traced elsewhere", kept))
    return mutations


@pytest.mark.parametrize("index", range(len(runs())), ids=lambda i: runs()[i].run_id[:12])
def test_a_nested_agent_traced_elsewhere_never_makes_a_verdict_safe(index: int) -> None:
    """The delegating call is kept, the agent it ran is not: what that agent called is not
    in the run (tool_calls.nested_agent), never "did not happen"."""
    run = runs()[index]
    mutations = _nested_agent_mutations(run)
    if not mutations:
        pytest.skip("no agent-as-tool call in this run")
    before = verdicts(run, run.spans)
    failures = [
        f"{name}: {moved}" for name, spans in mutations for moved in newly_safe(run, spans, before)
    ]
    assert not failures, "\n".join(failures)


def test_the_nested_agent_mutations_reach_every_framework() -> None:
    names = {name for run in runs() for name, _ in _nested_agent_mutations(run)}
    assert {
        "delegate_work_to_coworker: nested agent traced elsewhere",
        "weather_agent: nested agent traced elsewhere",
        "weather_expert: nested agent traced elsewhere",
    } <= names


def test_the_io_mutations_reach_the_samples_that_matter() -> None:
    """The mutations above are not vacuous: I/O under tool calls, and MCP servers' spans."""
    names = [name for run in runs() for name, _ in _io_mutations(run)]
    assert sum(": I/O dropped" in name for name in names) >= 40
    assert sum(": server spans dropped" in name for name in names) >= 4


def _last_model_call(run: Run) -> list[Span]:
    views = classify(RunGraph(run.spans)).records
    models = [view.span for view in views if view.model]
    if not models:
        return []
    return [max(models, key=lambda span: (span.end_ns or 0, span.start_ns or 0))]


@pytest.mark.parametrize("index", [_known_gap(i, _TRUNCATED_HISTORY) for i in range(len(runs()))])
def test_the_last_model_call_alone_never_makes_a_verdict_safe(index: int) -> None:
    run = runs()[index]
    last = _last_model_call(run)
    if not last:
        pytest.skip("no model call in this run")
    before = verdicts(run, run.spans)
    assert not newly_safe(run, last, before)


# --- a key recorded twice (OTLP keys MUST be unique) ------------------------------------------


def _with_repeated_keys(spans: list[Span]) -> list[Span]:
    """The spans through OTLP/JSON with every text attribute repeated after itself with
    another value: the decoder keeps the last value, hiding what the first said."""
    document = spans_to_json_dict(spans)
    for resource_spans in document["resourceSpans"]:
        for scope_spans in resource_spans["scopeSpans"]:
            for span in scope_spans["spans"]:
                kvs = span.get("attributes", [])
                span["attributes"] = kvs + [
                    {"key": kv["key"], "value": {"stringValue": "x"}}
                    for kv in kvs
                    if "stringValue" in kv.get("value", {})
                ]
    return spans_from_json(document)


@pytest.mark.parametrize("index", range(len(runs())), ids=lambda i: runs()[i].run_id[:12])
def test_a_key_recorded_twice_never_makes_a_verdict_safe(index: int) -> None:
    run = runs()[index]
    before = verdicts(run, run.spans)
    assert not newly_safe(run, _with_repeated_keys(run.spans), before)


# --- evidence that fits the harm (issue 43): one kind per place, remote agents ----------------


def _below(spans: list[Span], tops: set[str]) -> set[str]:
    """``tops`` and every span under them."""
    children: dict[str, list[str]] = {}
    for span in spans:
        if span.parent_span_id:
            children.setdefault(span.parent_span_id, []).append(span.span_id)
    gone, stack = set(), list(tops)
    while stack:
        span_id = stack.pop()
        if span_id not in gone:
            gone.add(span_id)
            stack.extend(children.get(span_id, ()))
    return gone


def _one_kind_mutations(run: Run) -> list[tuple[str, list[Span]]]:
    """For each tool call whose recorded I/O is of two kinds or more: the run without that
    call's spans of one kind (and what is under them), its other kinds kept, as a second
    client of that kind, not instrumented, leaves it."""
    agent = normalize(Run(run.run_id, list(run.trace_ids), run.spans, run.session_id))
    by_call: dict[int, dict[str, set[str]]] = {}
    for effect in agent.side_effects:
        if effect.tool_call_index is not None:
            kinds = by_call.setdefault(effect.tool_call_index, {})
            kinds.setdefault(effect.kind, set()).add(effect.span_id)
    mutations: list[tuple[str, list[Span]]] = []
    for index, kinds in sorted(by_call.items()):
        if len(kinds) < 2:
            continue
        for kind, span_ids in sorted(kinds.items()):
            gone = _below(run.spans, span_ids)
            kept = [span for span in run.spans if span.span_id not in gone]
            mutations.append((f"{agent.tool_calls[index].name}: {kind} spans dropped", kept))
    return mutations


def _remote_agent_mutations(run: Run) -> list[tuple[str, list[Span]]]:
    """For a run holding a remote agent's spans (A2A, its trace context propagated): the run
    without them, every span another process recorded under a span that delegates to it."""
    gone: set[str] = set()
    for span in run.spans:
        if a2a.remote_agent(span) is not None:
            gone |= _other_process_below(run.spans, span)
    if not gone:
        return []
    return [("remote agent's spans dropped", [s for s in run.spans if s.span_id not in gone])]


# Runs where the mutation above would still turn a verdict SAFE: none, now that evidence is
# per side-effect kind and a delegated agent whose spans are gone is out of process.
_NEEDS_PLACES: dict[str, str] = {}


@pytest.mark.parametrize("index", [_known_gap(i, _NEEDS_PLACES) for i in range(len(runs()))])
def test_dropping_one_kind_under_a_call_never_makes_a_verdict_safe(index: int) -> None:
    run = runs()[index]
    mutations = _one_kind_mutations(run) + _remote_agent_mutations(run)
    if not mutations:
        pytest.skip("no call with two kinds of I/O, no remote agent's spans")
    before = verdicts(run, run.spans)
    failures = [
        f"{name}: {moved}" for name, spans in mutations for moved in newly_safe(run, spans, before)
    ]
    assert not failures, "\n".join(failures)


def test_the_place_mutations_reach_the_samples_that_matter() -> None:
    names = [name for run in runs() for name, _ in _one_kind_mutations(run)]
    assert any(name.startswith("archive_report: http_request") for name in names)
    remote = [run for run in runs() if _remote_agent_mutations(run)]
    assert len(remote) >= 2  # the propagated A2A runs, harmful and benign
