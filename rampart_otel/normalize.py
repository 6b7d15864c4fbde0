"""Run → AgentRun: what the agent did, read through every convention the trace uses.

Composes the jobs, each in its own module: every span is classified once by the
conventions that read it (``span_views``); the tool calls they report are merged, one call
however many spans and conventions report it (``tool_calls``); the agent's side effects are
kept apart from the model's transport (``side_effects``); the response is the top agent
span's output, else the last model span's text (``response``); the user's messages are
read from the model and agent spans' inputs (``user_input``). What the run can attest is
inferred from the same classification (``coverage``, ``integrity``).

``plan`` (``scoring_plan``): what to produce. The full reading (``inspect``, and every
output that shows a run's coverage) decides every channel; a narrowed plan, built from the
checks that will read the run, leaves out the user's input and the channels no check
reads.
"""

from __future__ import annotations

from rampart_otel.model import AgentRun, ConventionUse, Run
from rampart_otel.processors.coverage import infer_coverage
from rampart_otel.processors.response import final_response
from rampart_otel.processors.run_facts import RunFacts, SpanRole
from rampart_otel.processors.scopes import (
    call_windows,
    continued_turns,
    executed_calls,
    tool_scopes,
)
from rampart_otel.processors.side_effects import agent_side_effects
from rampart_otel.processors.span_views import ClassifiedRun, SpanRecord, classified
from rampart_otel.processors.tool_calls import ToolCalls, merge_tool_calls
from rampart_otel.processors.user_input import collect_user_input
from rampart_otel.scoring_plan import FULL_READING, ScoringPlan
from rampart_otel.wording import worded_coverage, worded_findings


def normalize(run: Run, plan: ScoringPlan = FULL_READING) -> AgentRun:
    classes = classified(run)
    graph = classes.graph
    merged = merge_tool_calls(classes)
    calls = merged.calls
    tool_spans = [
        view.span
        for view in classes.records
        if merged.executes(view)
        and view.execution is not None
        and not view.execution.answer
        and merged.first_of_call(classes, view)
    ]
    continued = continued_turns(classes)
    executed = executed_calls(calls, bool(tool_spans), continued)
    side_effects, transport, windowed = agent_side_effects(
        classes, merged, call_windows(classes, calls, executed)
    )
    scopes = tool_scopes(classes, merged, side_effects, executed, windowed)
    response, response_view = final_response(classes, merged.dropped)
    user_input, model_inputs, agent_inputs = (
        collect_user_input(classes, merged.dropped) if plan.decides("input") else ([], [], [])
    )
    views = classes.records
    facts = RunFacts(
        graph=graph,
        roles=_roles(views, merged),
        model_outputs=[(v.span, v.output, v.read_through) for v in views if v.output is not None],
        tool_spans=tool_spans,
        answer_tool_spans=[v.span for v in views if v.execution is not None and v.execution.answer],
        agent_spans=[view.span for view in views if view.agent],
        conversation_spans=[view.span for view in views if view.agent and view.dispatched],
        continued=continued,
        effects=side_effects,
        transport_spans=transport,
        response_span=response_view.span if response_view else None,
        not_understood=[
            (view.span, notes)
            for view in views
            if (
                notes := [
                    *view.not_understood,
                    *(view.output.not_understood if view.output else []),
                ]
            )
        ],
        model_inputs=model_inputs,
        agent_inputs=agent_inputs,
        scopes=scopes,
        history_calls=[call for call in calls if call.from_history],
    )
    decisions, findings, places = infer_coverage(facts, response, calls, plan)
    root = graph.roots[0] if graph.roots else None
    starts = [span.start_ns for span in graph.spans if span.start_ns is not None]
    return AgentRun(
        run=run,
        service=root.resource.service_name if root is not None else None,
        started_at_ns=min(starts) if starts else None,
        response=response,
        tool_calls=calls,
        side_effects=side_effects,
        coverage=worded_coverage(decisions),
        integrity=worded_findings(findings),
        conventions=_conventions(classes),
        user_input=user_input,
        tool_scopes=scopes,
        places=places,
    )


def _conventions(run: ClassifiedRun) -> dict[str, ConventionUse]:
    """Spans each convention read, and did not understand, in the run (for ``inspect``).

    A family no convention reads has spans not understood and none read.
    """
    uses: dict[str, ConventionUse] = {}
    for view in run.records:
        for name in view.readers:
            uses.setdefault(name, ConventionUse()).spans += 1
        for name in view.unread_by:
            uses.setdefault(name, ConventionUse()).not_understood += 1
    return uses


def _roles(views: tuple[SpanRecord, ...], calls: ToolCalls) -> dict[str, SpanRole]:
    """Roles of the spans that have one; a span left out is generic (feeds every channel)."""
    roles: dict[str, SpanRole] = {}
    for view in views:
        tool = calls.executes(view)
        if view.model or view.agent or tool or view.effects or view.in_model:
            roles[view.span.span_id] = SpanRole(
                view.model,
                view.agent,
                tool,
                tuple(effect[0] for effect in view.effects),
                bool(view.in_model),
            )
    return roles
