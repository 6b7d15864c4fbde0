"""Run → AgentRun: what the agent did, read through every convention the trace uses, and
what the trace can attest.

One job after another, each in its own module, each reading what earlier jobs made and
returning its own (``JOBS`` lists them in order; docs/architecture.md's table is made from
it, and a test holds ``normalize`` to it):

1. classify: every span read once by the conventions that read it (``span_views``);
2. calls: the tool calls they report, merged, one call however many spans report it
   (``tool_calls``);
3. turns: which calls ran, and each one's time window (``turns``);
4. side effects: the agent's, kept apart from the model's transport, each attributed to
   the call that made it (``side_effects``);
5. places: each executed call as the places its side effects could happen, with the
   evidence per kind (``scopes``);
6. response: the top agent span's output, else the last model span's text (``response``);
7. user input: the user's messages, from the model and agent spans' inputs
   (``user_input``);
8. facts: what the jobs found, gathered for coverage (``run_facts``);
9. integrity: what the trace lost, and what it holds that is not understood
   (``integrity``);
10. coverage: each channel decided as data, capped by the findings, and the run's places
    (``coverage``; every channel's last step is ``places.run_decisions``);
11. words: the decisions and findings in words (``wording``), the only English; for a
    narrowed plan (no output shows coverage) a channel is worded when first read.

``plan`` (``scoring_plan``): what to produce. The full reading (``inspect``, and every
output that shows a run's coverage) decides every channel; a narrowed plan, built from the
checks that will read the run, leaves out the user's input and the channels no check reads.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rampart_otel.model import AgentRun, Run
from rampart_otel.processors.coverage import infer_coverage
from rampart_otel.processors.integrity import integrity_findings
from rampart_otel.processors.response import final_response
from rampart_otel.processors.run_facts import run_facts
from rampart_otel.processors.scopes import tool_scopes
from rampart_otel.processors.side_effects import agent_side_effects
from rampart_otel.processors.span_views import classified
from rampart_otel.processors.tool_calls import merge_tool_calls
from rampart_otel.processors.turns import read_turns
from rampart_otel.processors.user_input import collect_user_input
from rampart_otel.scoring_plan import FULL_READING, ScoringPlan
from rampart_otel.wording import worded_coverage, worded_findings


@dataclass(frozen=True, slots=True)
class Job:
    """One step of reading a run: what it reads, what it makes, and why it is a job."""

    name: str
    function: Callable[..., Any]
    reads: tuple[str, ...]
    makes: str
    why: str


JOBS: tuple[Job, ...] = (
    Job(
        "classify",
        classified,
        ("run",),
        "classes",
        "each span read once, by the conventions that read it, into a frozen record",
    ),
    Job(
        "calls",
        merge_tool_calls,
        ("classes",),
        "calls",
        "the tool calls every convention reports, one call however many spans report it",
    ),
    Job(
        "turns",
        read_turns,
        ("classes", "calls"),
        "turns",
        "which calls ran (or may have run unseen), and each one's time window",
    ),
    Job(
        "side effects",
        agent_side_effects,
        ("classes", "calls", "turns"),
        "side_effects",
        "the agent's side effects, the model's transport apart, each with the call it is in",
    ),
    Job(
        "places",
        tool_scopes,
        ("classes", "calls", "turns", "side_effects"),
        "scopes",
        "each executed call as the places its side effects could happen, evidence per kind",
    ),
    Job(
        "response",
        final_response,
        ("classes", "calls"),
        "response",
        "the agent's answer, and the texts before it",
    ),
    Job(
        "user input",
        collect_user_input,
        ("classes", "calls"),
        "user_input",
        "what the user sent into the run (only when a check reads it)",
    ),
    Job(
        "facts",
        run_facts,
        ("classes", "calls", "turns", "side_effects", "scopes", "response", "user_input"),
        "facts",
        "what the jobs found, as coverage reads it",
    ),
    Job(
        "integrity",
        integrity_findings,
        ("facts",),
        "findings",
        "what the trace lost, and what it holds that is not understood",
    ),
    Job(
        "coverage",
        infer_coverage,
        ("facts", "findings", "response", "calls"),
        "decisions",
        "each channel decided as data, capped by the findings, and the run's places",
    ),
    Job(
        "words",
        worded_coverage,
        ("decisions",),
        "coverage",
        "the decisions and findings in words: the only English of coverage",
    ),
)


def normalize(run: Run, plan: ScoringPlan = FULL_READING) -> AgentRun:
    """What the agent did in ``run`` and what the trace can attest: ``JOBS``, in order."""
    classes = classified(run)
    calls = merge_tool_calls(classes)
    tool_spans = list(calls.execution_spans)
    turns = read_turns(classes, calls, bool(tool_spans))
    side_effects = agent_side_effects(classes, calls, turns)
    joined = frozenset(stitch.trace_id for stitch in run.stitched)
    scopes = tool_scopes(classes, calls, turns, side_effects, joined)
    answer = final_response(classes, calls)
    response = answer.response
    user_input, model_inputs, agent_inputs = (
        collect_user_input(classes, calls) if plan.decides("input") else ([], [], [])
    )
    facts = run_facts(
        classes,
        calls,
        tool_spans,
        turns,
        side_effects,
        scopes,
        answer,
        (model_inputs, agent_inputs),
        joined,
    )
    findings = integrity_findings(facts)
    decisions, places = infer_coverage(facts, findings, response, calls.calls, plan)
    # A narrowed plan serves outputs that show no coverage: words only for what is read.
    coverage = worded_coverage(decisions, deferred=not plan.full)
    graph = classes.graph
    root = graph.roots[0] if graph.roots else None
    starts = [span.start_ns for span in graph.spans if span.start_ns is not None]
    return AgentRun(
        run=run,
        service=root.resource.service_name if root is not None else None,
        started_at_ns=min(starts) if starts else None,
        response=response,
        tool_calls=calls.calls,
        side_effects=side_effects.effects,
        coverage=coverage,
        integrity=worded_findings(findings),
        conventions=facts.conventions,
        user_input=user_input,
        tool_scopes=scopes.scopes,
        places=places,
    )


def jobs_table() -> str:
    """docs/architecture.md's table of the jobs (``make docs``)."""
    rows = [
        f"| {n} | {job.name} | `{job.function.__module__}.{job.function.__name__}` | "
        f"{', '.join(job.reads)} | {job.makes} | {job.why} |"
        for n, job in enumerate(JOBS, start=1)
    ]
    head = ["| # | job | function | reads | makes | why |", "|---|---|---|---|---|---|"]
    return "\n".join([*head, *rows])
