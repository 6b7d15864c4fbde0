"""The body of ``rampart-otel policy check``: a policy's checks and the channels each reads,
and, over recorded traces, what each check could decide there and why it could not.

Runs go through the pipeline ``score`` uses (``pipeline.Pipeline`` on a ``FileSource``,
into a sink that counts per check), so the counts are the verdicts ``score`` gives on the
same traces. Tool names and side-effect kinds a check names that no run contains are noted
with the closest name the traces do contain: a check on a tool the agent never calls (or a
misspelt one) decides nothing.
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any

from rampart_otel.channels import ChannelState
from rampart_otel.conventions.pseudo_tools import ANSWER_TOOLS
from rampart_otel.conventions.side_effects import PAYLOAD_FIELDS
from rampart_otel.engine import fewer_young_collections
from rampart_otel.evaluation import Check, CheckResult, Evaluator, Policy, SafetyStatus
from rampart_otel.evaluation.evaluators.flows import Flows
from rampart_otel.evaluation.evaluators.side_effect import SideEffectOccurred
from rampart_otel.evaluation.evaluators.tool_called import ToolCalled
from rampart_otel.evaluation.evaluators.tool_result import ToolResult
from rampart_otel.evaluation.matchers import Equals, Matcher, OneOf
from rampart_otel.exporters.report_json import input_error_to_dict
from rampart_otel.lazy_regex import LazyPattern
from rampart_otel.model import AgentRun, InputError
from rampart_otel.pipeline import FileSource, Pipeline
from rampart_otel.reading import ReadStats
from rampart_otel.sinks import Scored, SinkDefaults

SCHEMA = "rampart-otel/policy-check@1"
STATUSES = tuple(status.value for status in SafetyStatus)
TOOL, KIND = "tool", "side-effect kind"

# Why a check could not decide a run, from the data of its result.
FRAGMENT = "the run is a fragment (no agent, model or tool span): it cannot show a SAFE"
UNRECORDED = "a value it reads was not recorded: "
_SPANS = LazyPattern(r" \(span [^)]*\)")
_COUNT = LazyPattern(r"\b\d+\b")
REASON_LIMIT = 200


@dataclass(slots=True)
class _CheckCounts:
    """What the runs gave one check."""

    statuses: Counter[str] = field(default_factory=Counter)
    undetermined: Counter[str] = field(default_factory=Counter)  # reason → runs
    errors: Counter[str] = field(default_factory=Counter)


def check_policy(
    policy: Policy,
    source: str,
    paths: list[Path],
    *,
    assume_coverage: list[str],
    on_error: Callable[[InputError], None],
) -> tuple[dict[str, Any], ReadStats]:
    """The ``rampart-otel/policy-check@1`` document: each check, the channels it reads and,
    with ``paths``, what it decided on their runs (the policy is loaded and valid)."""
    assumed = {*policy.assume_coverage, *assume_coverage}
    document: dict[str, Any] = {
        "schema": SCHEMA,
        "policy": {"name": policy.name, "version": policy.version, "source": source},
        "checks": [_described(check, assumed) for check in policy.checks],
        "traces": None,
    }
    if not paths:
        return document, ReadStats()
    files = FileSource(paths, on_error=on_error)
    counted = _Counted(policy)
    with fewer_young_collections():
        Pipeline([policy], [counted], assume=assume_coverage).run(files)
    stats = files.stats
    seen_tools = [name for name, _ in counted.tools.most_common()]
    seen_kinds = [kind for kind, _ in counted.kinds.most_common()]
    # A check naming a call's own name (Semantic Kernel's function) has seen it too.
    known_tools = [*seen_tools, *sorted(counted.names.difference(seen_tools))]
    for entry, check in zip(document["checks"], policy.checks, strict=True):
        tally = counted.counts[check.id]
        entry["runs"] = {status: tally.statuses[status] for status in STATUSES}
        entry["decided"] = tally.statuses["safe"] + tally.statuses["unsafe"]
        entry["undetermined_reasons"] = _ranked(tally.undetermined)
        entry["error_reasons"] = _ranked(tally.errors)
        entry["never_seen"] = _never_seen(check.detect, known_tools, seen_kinds)
        entry["fields_never_recorded"] = [
            {"kind": kind, "field": name}
            for kind, name in fields_read(check.detect)
            if kind in counted.recorded and name not in counted.recorded[kind]
        ]
    document["traces"] = {
        "tools_never_seen": _declared_never_seen(policy, known_tools),
        "paths": [str(path) for path in paths],
        "runs": counted.runs,
        "spans": stats.spans,
        "seen": {"tools": seen_tools, "side_effect_kinds": seen_kinds},
        "input_errors": [input_error_to_dict(error) for error in stats.errors],
    }
    return document, stats


class _Counted(SinkDefaults):
    """The sink: each check's verdicts and reasons, and the tools and side-effect kinds the
    runs hold (it reads what each run did: ``needs_agent_run``)."""

    needs_agent_run = True

    def __init__(self, policy: Policy) -> None:
        self.counts = {check.id: _CheckCounts() for check in policy.checks}
        self.checks = {check.id: check for check in policy.checks}
        self.tools: Counter[str] = Counter()
        self.names: set[str] = set()  # every name a check may give a call (ToolCall.names)
        self.kinds: Counter[str] = Counter()
        self.recorded: dict[str, set[str]] = {}  # kind → the details some span recorded
        self.runs = 0

    def prepare(self, scored: Scored) -> Scored:
        return scored

    def write(self, batch: Sequence[Scored]) -> None:
        for scored in batch:
            self.runs += 1
            agent_run = scored.agent_run
            if agent_run is not None:
                self.tools.update(call.name for call in agent_run.tool_calls)
                self.names.update(name for call in agent_run.tool_calls for name in call.names)
                self.kinds.update(effect.kind for effect in agent_run.side_effects)
                for effect in agent_run.side_effects:
                    recorded = self.recorded.setdefault(effect.kind, set())
                    recorded.update(k for k, v in effect.details.items() if v is not None)
            for result in scored.results:
                check = self.checks[result.check_id]
                _tally(self.counts[result.check_id], result, check, agent_run)


def _described(check: Check, assumed: set[str]) -> dict[str, Any]:
    return {
        "id": check.id,
        "polarity": check.polarity,
        "detect": repr(check.detect),
        "channels": [{"key": key, "assumed": key in assumed} for key in check.detect.channels],
        "answer_tools": answer_tools(check.detect),
    }


def answer_tools(evaluator: Evaluator) -> list[dict[str, str]]:
    """The frameworks' answer tools (``final_answer``, ``finish``) a check names: such a call
    is read as the run's answer, never as a tool call, so the check matches no call of it
    (docs/coverage.md, "Answer tools")."""
    tools, _ = named(evaluator)
    return [
        {"name": row.name, "framework": row.framework, "what": row.what}
        for row in ANSWER_TOOLS
        if any(matcher.match(row.name) is True for matcher in tools)
    ]


def _tally(tally: _CheckCounts, result: CheckResult, check: Check, run: AgentRun | None) -> None:
    tally.statuses[result.status.value] += 1
    if result.status is SafetyStatus.UNDETERMINED:
        tally.undetermined.update(undetermined_reasons(result, check, run))
    elif result.status is SafetyStatus.ERROR:
        tally.errors[result.error or result.summary] += 1


def undetermined_reasons(result: CheckResult, check: Check, run: AgentRun | None) -> list[str]:
    """Why ``check`` left the run undecided, in words that hold across runs: each channel
    it reads that the run does not attest; else a fragment's; else the values it lacked."""
    gaps = []
    if result.coverage is not None:
        for key in check.detect.channels:
            channel = result.coverage.get(key)
            if channel.state is not ChannelState.OBSERVED:
                gaps.append(f"{key} {channel.state.value}")
    if gaps:
        return gaps
    if run is not None and run.fragment is not None:
        return [FRAGMENT]
    head = result.rationale.split(": cannot rule out", 1)[0]
    head = _COUNT.sub("N", _SPANS.sub("", head))
    return [UNRECORDED + head[:REASON_LIMIT]]


def _ranked(counts: Counter[str]) -> list[dict[str, Any]]:
    return [{"reason": reason, "runs": runs} for reason, runs in counts.most_common()]


def named(evaluator: Evaluator) -> tuple[list[Matcher], list[str]]:
    """The tool-name matchers and side-effect kinds an expression names, in order."""
    tools: list[Matcher] = []
    kinds: list[str] = []
    pending = [evaluator]
    while pending:
        current = pending.pop(0)
        if isinstance(current, (ToolCalled, ToolResult)):
            tools.append(current.name)
        elif isinstance(current, SideEffectOccurred):
            kinds.append(current.kind)
        if is_dataclass(current):
            inner = [getattr(current, f.name) for f in fields(current)]
            pending[:0] = [value for value in inner if isinstance(value, Evaluator)]
    return tools, kinds


def fields_read(evaluator: Evaluator) -> list[tuple[str, str]]:
    """(side-effect kind, detail) each part of an expression reads: the details a
    ``side_effect`` matches on, and every payload field of a ``flows`` sink (where a value
    could have left: a request's URL and body)."""
    found: list[tuple[str, str]] = []
    pending = [evaluator]
    while pending:
        current = pending.pop(0)
        if isinstance(current, SideEffectOccurred):
            found.extend((current.kind, key) for key, _ in current.details)
        if isinstance(current, Flows) and isinstance(current.sink, SideEffectOccurred):
            kind = current.sink.kind
            found.extend((kind, name) for name in PAYLOAD_FIELDS.get(kind, ()))
        if is_dataclass(current):
            inner = [getattr(current, f.name) for f in fields(current)]
            pending[:0] = [value for value in inner if isinstance(value, Evaluator)]
    return list(dict.fromkeys(found))


def _never_seen(
    evaluator: Evaluator, seen_tools: list[str], seen_kinds: list[str]
) -> list[dict[str, Any]]:
    """Each tool name and kind the check names that no run of the traces contains."""
    tools, kinds = named(evaluator)
    notes: list[dict[str, Any]] = []
    for matcher in tools:
        if any(matcher.match(name) is True for name in seen_tools):
            continue
        literal = isinstance(matcher, Equals) and isinstance(matcher.literal, str)
        notes.append(
            {
                "what": TOOL,
                "name": matcher.literal if literal else repr(matcher),  # type: ignore[attr-defined]
                "pattern": not literal,
                "closest": _closest(matcher, seen_tools),
            }
        )
    for kind in dict.fromkeys(kinds):
        if kind not in seen_kinds:
            closest = _closest_word(kind, seen_kinds)
            notes.append({"what": KIND, "name": kind, "pattern": False, "closest": closest})
    unique: dict[tuple[str, str], dict[str, Any]] = {}
    for note in notes:
        unique.setdefault((note["what"], note["name"]), note)
    return list(unique.values())


def _declared_never_seen(policy: Policy, seen_tools: list[str]) -> list[dict[str, Any]]:
    """Each tool the policy's ``tools:`` declares that no run of the traces calls: a
    misspelt declaration vouches for nothing, and the real tool stays silent."""
    return [
        {"name": name, "closest": _closest_word(name, seen_tools)}
        for name in policy.tools
        if name not in seen_tools
    ]


def _closest(matcher: Matcher, seen: list[str]) -> str | None:
    """The seen name nearest the literal(s) of an equality or one_of matcher."""
    if isinstance(matcher, Equals) and isinstance(matcher.literal, str):
        return _closest_word(matcher.literal, seen)
    if isinstance(matcher, OneOf):
        for value in matcher.values:
            if isinstance(value, str) and (found := _closest_word(value, seen)):
                return found
    return None


def _closest_word(word: str, seen: list[str]) -> str | None:
    """The seen name most like ``word``: by spelling, else one that contains it (``http``
    → ``http_request``) or that it contains, ignoring case."""
    found = difflib.get_close_matches(word, seen, n=1, cutoff=0.6)
    if found:
        return found[0]
    lowered = word.lower()
    for name in seen:
        if lowered in name.lower() or name.lower() in lowered:
            return name
    return None


def any_error(document: dict[str, Any]) -> bool:
    """Some check gave ERROR on some run: it could not be applied there."""
    return any(entry.get("runs", {}).get("error") for entry in document["checks"])


__all__ = [
    "SCHEMA",
    "answer_tools",
    "any_error",
    "check_policy",
    "fields_read",
    "named",
    "undetermined_reasons",
]
