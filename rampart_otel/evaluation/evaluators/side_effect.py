"""``side_effect``: a side effect of one kind whose details match."""

from __future__ import annotations

from dataclasses import dataclass, field

from rampart_otel.channels import is_side_effect_kind
from rampart_otel.conventions.side_effects import INTERPRETED, unrecorded_payload
from rampart_otel.evaluation.evaluators.events import (
    EventEvaluator,
    Moment,
    Occurrence,
    Occurrences,
    Part,
)
from rampart_otel.evaluation.evaluators.settle import (
    EVIDENCE_LIMIT,
    describe_matchers,
    render_value,
    span_list,
)
from rampart_otel.evaluation.matchers import MISSING, Matcher, Scalar, all_match, as_matcher
from rampart_otel.evaluation.outcome import Evidence
from rampart_otel.model import AgentRun, Ambiguous, SideEffect
from rampart_otel.render import safe_text

_HEADLINE_KEYS = {
    "http_request": ("method", "url"),
    "db_query": ("system", "statement"),
    "message_publish": ("system", "destination"),
    "rpc_call": ("system", "service", "method"),
    "process_exec": ("executable", "args"),
    "mcp_request": ("method", "target"),
}


@dataclass(frozen=True, slots=True)
class SideEffectOccurred(EventEvaluator):
    """A side effect of ``kind`` whose details match."""

    kind: str
    details: tuple[tuple[str, Matcher], ...] = ()
    _target: str = field(default="", init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not is_side_effect_kind(self.kind):
            raise ValueError(
                f"side-effect kind must be an identifier such as 'http_request', not {self.kind!r}"
            )

    @property
    def channels(self) -> tuple[str, ...]:
        return (f"side_effects.{self.kind}",)

    def target(self) -> str:
        return f"{self.kind} with {describe_matchers(self.details)}" if self.details else self.kind

    def occurrences(self, run: AgentRun) -> Occurrences:
        found = Occurrences()
        undecided: list[str | None] = []
        missing_keys: dict[str, None] = {}
        matchers = dict(self.details)
        for effect in run.side_effects:
            if effect.kind != self.kind:
                continue
            answer = all_match(matchers, effect.details)
            if answer is True:
                found.matches.append(_effect_occurrence(effect, matchers))
            elif answer is None:
                undecided.append(effect.span_id)
                found.undecided.append(_effect_occurrence(effect, matchers))
                for key, matcher in self.details:
                    if matcher.match(effect.details.get(key, MISSING)) is None:
                        missing_keys[key] = None
        if undecided:
            found.unknown_reasons.append(
                f"{len(undecided)} {self.kind} side effect(s) without a recorded "
                f"{', '.join(missing_keys)}{span_list(undecided)}"
            )
        return found

    def __repr__(self) -> str:
        details = "".join(f", {key}={matcher!r}" for key, matcher in self.details)
        return f"side_effect({self.kind!r}{details})"


# The details of each kind a value can reach (``flows``' sink): an effect recording none of
# them (a request whose URL was dropped) holds no value to look in, not an empty one.
_REACHABLE_KEYS = {
    "http_request": ("url", "host", "path"),
    "db_query": ("statement", "collection"),
    "message_publish": ("destination",),
    "rpc_call": ("service", "method"),
    "process_exec": ("executable", "args"),
    "mcp_request": ("target",),
}


def _effect_occurrence(effect: SideEffect, read: dict[str, Matcher]) -> Occurrence:
    evidence = _effect_evidence(effect, read)
    details = effect.details
    keys = _REACHABLE_KEYS.get(effect.kind)
    value = (
        MISSING if keys is not None and all(details.get(k) in (None, "") for k in keys) else details
    )
    unrecorded = unrecorded_payload(effect.kind, details, effect.derived)
    return Occurrence(evidence, Moment(effect.span_id, Part.SPAN), value, unrecorded)


def _effect_evidence(effect: SideEffect, read: dict[str, Matcher]) -> Evidence:
    """The effect's headline details; and each detail a matcher read that the span did not
    record but was read from its text (``INTERPRETED``), with where it was read from."""
    details = effect.details
    keys = _HEADLINE_KEYS.get(effect.kind)
    if keys and any(k in details for k in keys):
        parts = [safe_text(details[k], EVIDENCE_LIMIT) for k in keys if k in details]
        if effect.kind == "http_request" and "url" not in details and "host" in details:
            parts.append(safe_text(details["host"], EVIDENCE_LIMIT))
    else:
        parts = [f"{safe_text(k, 40)}={render_value(v)}" for k, v in details.items()]
    text = safe_text(" ".join([safe_text(effect.kind, 60), *parts]), EVIDENCE_LIMIT)
    derived = [
        f"{safe_text(key, 40)} {safe_text(render_value(details[key]), 80)} derived from "
        f"{safe_text(effect.derived[key], 80)}"
        for key in read
        if key in effect.derived
        and (effect.kind, key) in INTERPRETED
        and details.get(key) is not None
    ]
    host = details.get("host")
    if isinstance(host, Ambiguous):  # parsers disagree: say which hosts it may have gone to
        readings = ", ".join(safe_text(reading, 80) for reading in host.readings)
        derived.append(f"host ambiguous: parsers read {readings}")
    if derived:
        text = f"{text} [{'; '.join(derived)}]"
    return Evidence(effect.trace_id, effect.span_id, text)


def side_effect(
    kind: str, /, **detail_matchers: Matcher | Scalar | list[Scalar]
) -> SideEffectOccurred:
    """A side effect of ``kind`` whose details match; reads ``side_effects.<kind>``."""
    details = tuple((key, as_matcher(value)) for key, value in detail_matchers.items())
    return SideEffectOccurred(kind, details)
