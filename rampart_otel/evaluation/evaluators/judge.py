"""``judge(question, over=...)``: an LLM answers a question about what the run recorded.

The judge reads channels like any evaluator, so coverage comes first: when a channel it
would read is not observed, or a text it would show was not captured, the result is
UNDETERMINED and no request is made. Otherwise the vote of the judge's samples decides:

=====================================  =============
judge's majority                       outcome
=====================================  =============
yes (the excerpt shows it)             DETECTED
no, and the judge saw every text       NOT_DETECTED
no, but a text was cut to fit          UNDETERMINED
not applicable                         UNDETERMINED
no majority among valid answers       UNDETERMINED
failure, bad format (no majority)      ERROR (raised: ``JudgeUnavailable``), or
                                       UNDETERMINED with ``on_unavailable: undetermined``
=====================================  =============

"Not applicable" is not read as "did not happen": the judge said the question does not
fit what it was shown, which is not evidence of absence. A judge that cannot answer is
an infrastructure failure, not a finding: ERROR unless the policy accepts UNDETERMINED.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rampart_otel.evaluation.evaluators.algebra import Evaluator
from rampart_otel.evaluation.evaluators.settle import read_coverage, span_list
from rampart_otel.evaluation.judge_endpoint import JudgeUnavailable
from rampart_otel.evaluation.outcome import EvalOutcome, EvalResult, Evidence
from rampart_otel.model import AgentRun, ToolCallStatus
from rampart_otel.render import safe_text

if TYPE_CHECKING:
    from rampart_otel.evaluation.judge_endpoint import JudgeClient

OVER: dict[str, tuple[str, ...]] = {
    "response": ("response",),
    "input": ("input",),
    "tool_calls": ("tool_calls", "tool_calls.arguments"),
    "tool_results": ("tool_calls", "tool_calls.results"),
    "run": ("input", "tool_calls", "tool_calls.arguments", "tool_calls.results", "response"),
}
WHAT = {
    "response": "the agent's final response",
    "input": "what the user sent to the agent",
    "tool_calls": "the tool calls the agent made, with their arguments",
    "tool_results": "the results the agent's tool calls returned",
    "run": "a transcript of the run: the user's input, tool calls and results, the response",
}
PART_LIMIT = 4_000  # characters of one message, argument list or result
TEXT_LIMIT = 24_000  # characters shown to the judge in all


@dataclass(frozen=True, slots=True)
class Judge(Evaluator):
    question: str
    over: str
    client: JudgeClient = field(compare=False, repr=False)

    @property
    def channels(self) -> tuple[str, ...]:
        return OVER[self.over]

    def evaluate(self, run: AgentRun) -> EvalResult:
        target = f"what the judge was asked ({self.question!r})"
        read = read_coverage(run, self.channels)
        text, missing, spans, cut = _excerpt(run, self.over)
        gaps = [*read.gaps, *missing]
        if gaps:  # coverage first: no request for text the trace could not show whole
            return EvalResult(
                EvalOutcome.UNDETERMINED,
                [],
                f"{'; '.join(gaps)}: cannot judge {target}",
                undetermined_operands=[f"{gap}: cannot judge {target}" for gap in gaps],
            )
        answer = self.client.ask(self.question, WHAT[self.over], text)
        if answer.unavailable and self.client.config.on_unavailable == "error":
            raise JudgeUnavailable(safe_text(answer.reason, 300))
        said = safe_text(answer.rationale, 300)
        if answer.verdict == "yes":
            cited = "; ".join(safe_text(e, 120) for e in answer.evidence[:2])
            quote = f"judge: {said}" + (f" (cited: {cited})" if cited else "")
            trace_id = run.trace_ids[0] if run.trace_ids else None
            evidence = [Evidence(trace_id, spans[0] if spans else None, quote)]
            return EvalResult(EvalOutcome.DETECTED, evidence, f"the judge found {target}: {said}")
        if answer.verdict == "no" and cut:  # it did not see everything: not evidence of absence
            return EvalResult(
                EvalOutcome.UNDETERMINED,
                [],
                f"the judge found no {target} in what it was shown, but {cut}: cannot rule it out",
            )
        if answer.verdict == "no":
            return EvalResult(
                EvalOutcome.NOT_DETECTED,
                [],
                f"the judge found no {target} in {WHAT[self.over]}{span_list(spans)}: {said}",
                assumed_channels=read.assumed,
            )
        why = (
            f"the judge found the question not applicable: {said}"
            if answer.verdict == "not_applicable"
            else f"the judge gave no verdict: {safe_text(answer.reason, 300)}"
        )
        return EvalResult(EvalOutcome.UNDETERMINED, [], f"{why}: cannot judge {target}")

    def __repr__(self) -> str:
        return f"judge({self.question!r}, over={self.over!r})"


def _excerpt(run: AgentRun, over: str) -> tuple[str, list[str], list[str], str]:
    """The text shown to the judge, what of it was not captured, the spans it comes from,
    and what was cut to fit ("" when nothing was)."""
    cuts: list[str] = []

    def _clip(text: str) -> str:
        if len(text) <= PART_LIMIT:
            return text
        cuts.append(f"a text of {len(text)} characters was cut to {PART_LIMIT}")
        return text[:PART_LIMIT] + " [… cut]"

    parts: list[str] = []
    missing: list[str] = []
    spans: list[str] = []
    if over in ("input", "run"):
        for number, message in enumerate(run.user_input, 1):
            if message.text is None:
                missing.append(f"user message {number} was not captured")
            else:
                parts.append(f"[user] {_clip(message.text)}")
            spans.extend([message.span_id] if message.span_id else [])
    if over in ("tool_calls", "tool_results", "run"):
        for call in run.tool_calls:
            spans.extend(call.span_ids[:1])
            if over in ("tool_calls", "run"):
                if not call.arguments_captured:
                    missing.append(f"the arguments of tool call {call.name!r} were not captured")
                else:
                    parts.append(f"[tool call] {call.name}({_clip(_text(call.arguments))})")
            if over in ("tool_results", "run"):
                # A failed call returned something too (its error output): shown, like
                # coverage counts it. A call only requested may have no result at all.
                label = "tool error" if call.status is ToolCallStatus.ERROR else "tool result"
                if call.result_captured:
                    parts.append(f"[{label}] {call.name} -> {_clip(_text(call.result))}")
                elif call.status is not ToolCallStatus.REQUESTED:
                    missing.append(f"the result of tool call {call.name!r} was not captured")
    if over in ("response", "run"):
        if run.response.text is None:
            missing.append("the final response text was not captured")
        else:
            parts.append(f"[response] {_clip(run.response.text)}")
        spans.extend([run.response.span_id] if run.response.span_id else [])
    text = "\n".join(parts)
    if len(text) > TEXT_LIMIT:
        cuts.append(f"the excerpt of {len(text)} characters was cut to {TEXT_LIMIT}")
        text = text[:TEXT_LIMIT] + "\n[… excerpt cut]"
    return text, missing, spans, "; ".join(cuts[:2])


def _text(value: object) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str, sort_keys=True)


def judge(question: str, /, *, over: str = "response", client: JudgeClient) -> Judge:
    """Ask the judge ``question`` about ``over``: response, input, tool_calls, tool_results
    or run (a transcript of all of them)."""
    if not isinstance(question, str) or not question.strip():
        raise ValueError("judge() takes a question (a non-empty string)")
    if over not in OVER:
        raise ValueError(f"judge(over=...) must be one of {', '.join(OVER)}, not {over!r}")
    return Judge(question.strip(), over, client)
