"""From an evaluator's outcome to a check's verdict on one run, with an honest summary.

``evaluate_check`` never raises: an evaluator that crashes is an ERROR verdict for that
(run, check), never a lost report.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from enum import StrEnum

from rampart_otel.channels import Coverage, CoverageSource, ObservabilityLevel
from rampart_otel.evaluation.assume import assume_run, declare_run_tools
from rampart_otel.evaluation.outcome import EvalOutcome, EvalResult, Evidence
from rampart_otel.evaluation.policy import Check, Policy
from rampart_otel.lazy_regex import LazyPattern
from rampart_otel.model import AgentRun, IntegrityFinding
from rampart_otel.render import clipped, safe_text

OUT_OF_TIME = "not evaluated: the run's time budget for scoring ran out"
SHOWN = 2  # gaps / evidence items named before "and N more"
ITEM_LIMIT = 400  # characters per named item
RATIONALE_LIMIT = 600


class SafetyStatus(StrEnum):
    SAFE = "safe"
    UNSAFE = "unsafe"
    UNDETERMINED = "undetermined"
    ERROR = "error"


_ATTACK = {
    EvalOutcome.DETECTED: SafetyStatus.UNSAFE,
    EvalOutcome.NOT_DETECTED: SafetyStatus.SAFE,
    EvalOutcome.UNDETERMINED: SafetyStatus.UNDETERMINED,
}
_PROBE = {
    EvalOutcome.DETECTED: SafetyStatus.SAFE,
    EvalOutcome.NOT_DETECTED: SafetyStatus.UNSAFE,
    EvalOutcome.UNDETERMINED: SafetyStatus.UNDETERMINED,
}


def resolve(outcome: EvalOutcome, polarity: str) -> SafetyStatus:
    """attack: the expression is the harm; probe: it is the expected behaviour."""
    if polarity == "attack":
        return _ATTACK[outcome]
    if polarity == "probe":
        return _PROBE[outcome]
    raise ValueError(f"unknown polarity {polarity!r}")


@dataclass(slots=True)
class CheckResult:
    """The verdict of one check on one run: one entry of a report's ``results``.

    ``coverage`` is a snapshot (the run's coverage after assumptions); ``assumed_channels``
    names the channels the verdict rests on that the trace did not itself show (source
    ``declared`` or ``assumed``). ``outcome`` is None and ``error`` set for an ERROR.
    Trace-supplied text is already safe in ``summary``, ``rationale``, ``evidence`` and
    ``undetermined_operands``; ``service``, ``trace_ids`` and coverage reasons are raw.
    """

    run_id: str
    trace_ids: list[str]
    check_id: str
    polarity: str
    status: SafetyStatus
    summary: str
    evidence: list[Evidence] = field(default_factory=list)
    undetermined_operands: list[str] = field(default_factory=list)
    observability_level: ObservabilityLevel | None = None
    coverage: Coverage | None = None
    harm_category: str | None = None
    service: str | None = None
    started_at_ns: int | None = None
    assumed_channels: dict[str, CoverageSource] = field(default_factory=dict)
    rationale: str = ""
    # Where each of the run's traces was read (``Run.sources``: path:line, path@offset, path).
    sources: list[str] = field(default_factory=list)
    outcome: EvalOutcome | None = None
    error: str | None = None
    policy: str | None = None  # the policy the check belongs to, when it was run from one
    policy_version: int | str | None = None

    @property
    def passed(self) -> bool:
        return self.status is SafetyStatus.SAFE

    def __bool__(self) -> bool:
        """True only for SAFE, as in RAMPART: ``assert result`` fails on a detected attack."""
        return self.status is SafetyStatus.SAFE


def evaluate_check(run: AgentRun, check: Check, *, coverage: Coverage | None = None) -> CheckResult:
    """Evaluate one check on one run; any failure becomes an ERROR result, never an exception.

    ``coverage``: the snapshot of the run's coverage to report (see :func:`snapshot`);
    taken here when not given. Every result of one run may share one snapshot.
    """
    return _evaluated(run, check, _RunHead.of(run, coverage))


def _evaluated(run: AgentRun, check: Check, head: _RunHead | None) -> CheckResult:
    result = _skeleton(run, check, head)
    try:
        evaluation = check.detect.evaluate(run)
        if not isinstance(evaluation, EvalResult) or not isinstance(
            evaluation.outcome, EvalOutcome
        ):
            raise TypeError(f"evaluator returned {type(evaluation).__name__}, not an EvalResult")
        status = resolve(evaluation.outcome, check.polarity)
        fragment = head.fragment if head is not None else run.fragment
        if status is SafetyStatus.SAFE and fragment is not None:
            # A fragment shows what happened, never the whole run a SAFE speaks for.
            status = SafetyStatus.UNDETERMINED
            evaluation = _capped(evaluation, fragment.message)
        # Each text rendered once: the summary clips these (a rationale is often the
        # coverage gaps of every channel the check reads, hundreds of characters).
        operands = [safe_text(g, None) for g in evaluation.undetermined_operands]
        rationale = safe_text(evaluation.rationale, None)
        result.summary = _summary(status, check.polarity, evaluation, operands, rationale)
        result.status = status
        result.outcome = evaluation.outcome
        result.evidence = list(evaluation.evidence)
        result.undetermined_operands = operands
        result.assumed_channels = dict(evaluation.assumed_channels)
        result.rationale = rationale
        if check.masks_secrets:
            _mask_secrets(result)
    except Exception as exc:
        message = f"{type(exc).__name__}: {safe_text(exc)}"
        result.status = SafetyStatus.ERROR
        result.summary = f"Evaluation error: {message}"
        result.error = message
        result.outcome = None
    return result


# A clipped evidence text's last token, which may be the start of a secret cut too short for
# a detector to know it.
_CUT_TOKEN = LazyPattern(r"[A-Za-z0-9_\-+/=.~]{1,256}…$")


def _masked(text: str) -> str:
    """``text`` with every secret masked (``…[masked:DETECTOR]`` names the detector), and
    the token a clip cut short dropped."""
    from rampart_otel.secret_values import mask_secrets  # startup: only for a secret() check

    text = mask_secrets(text)
    return _CUT_TOKEN.sub("…", text) if not text.endswith("]…") else text


def _mask_secrets(result: CheckResult) -> None:
    """A ``secret()`` check's result shows what it found masked: it quotes the very values
    it is about, and a report is read by more people than the secret was meant for."""
    result.summary = _masked(result.summary)
    result.rationale = _masked(result.rationale)
    result.evidence = [replace(item, text=_masked(item.text)) for item in result.evidence]
    result.undetermined_operands = [_masked(text) for text in result.undetermined_operands]


def evaluate_policy(
    run: AgentRun,
    policy: Policy,
    *,
    assume_coverage: Iterable[str] = (),
    deadline: float | None = None,
) -> list[CheckResult]:
    """Every check of ``policy`` on ``run``, after the policy's and the caller's assumptions.

    ``deadline`` (``time.monotonic()``): checks not started by then are UNDETERMINED, so one
    huge run cannot hold up every other. The caller's run is not changed. Raises ValueError
    only for an invalid channel key in ``assume_coverage``, before evaluating anything.
    """
    run = declare_run_tools(run, {name: d.side_effects for name, d in policy.tools.items()})
    run = assume_run(run, [*policy.assume_coverage, *assume_coverage])
    # One per run: the checks read the run, never change it.
    head = _RunHead.of(run, snapshot(run))
    results = []
    for check in policy.checks:
        if deadline is not None and time.monotonic() > deadline:
            result = _skeleton(run, check, head)
            result.status = SafetyStatus.UNDETERMINED
            result.summary = f"Undetermined: {OUT_OF_TIME}"
            result.undetermined_operands = [OUT_OF_TIME]
        else:
            result = _evaluated(run, check, head)
        result.policy, result.policy_version = policy.name, policy.version
        results.append(result)
    return results


def _capped(evaluation: EvalResult, reason: str) -> EvalResult:
    """The evaluation with ``reason`` first among its gaps (it stops a SAFE verdict)."""
    operands = [reason, *(g for g in evaluation.undetermined_operands if g != reason)]
    return replace(evaluation, outcome=EvalOutcome.UNDETERMINED, undetermined_operands=operands)


def snapshot(run: AgentRun) -> Coverage | None:
    """A copy of the run's coverage, as a result reports it; None for a malformed run."""
    try:
        return Coverage(
            {key: channel.copy() for key, channel in run.coverage.channels.items()},
            run.coverage.level,
        )
    except Exception:  # a malformed run still gets a result; evaluation will report the error
        return None


@dataclass(frozen=True, slots=True)
class _RunHead:
    """What every result of one run repeats, read once per run (None: a malformed run)."""

    run_id: str
    trace_ids: list[str]
    level: ObservabilityLevel
    coverage: Coverage | None
    service: str | None
    started_at_ns: int | None
    sources: list[str]
    fragment: IntegrityFinding | None

    @classmethod
    def of(cls, run: AgentRun, coverage: Coverage | None) -> _RunHead | None:
        try:
            return cls(
                run.run_id,
                list(run.trace_ids),
                run.coverage.level,
                coverage if coverage is not None else snapshot(run),
                run.service,
                run.started_at_ns,
                run.run.sources,
                run.fragment,
            )
        except Exception:  # a malformed run: _skeleton reads what it can, field by field
            return None


def _skeleton(run: AgentRun, check: Check, head: _RunHead | None) -> CheckResult:
    """The parts of a result that do not depend on the evaluation, read defensively."""
    check_id = str(getattr(check, "id", ""))
    polarity = str(getattr(check, "polarity", ""))
    harm_category = getattr(check, "harm_category", None)
    if head is not None:  # the usual case, in one construction (positional: no keywords)
        return CheckResult(
            head.run_id,
            list(head.trace_ids),
            check_id,
            polarity,
            SafetyStatus.ERROR,
            "Evaluation error: not evaluated",
            [],  # evidence
            [],  # undetermined_operands
            head.level,
            head.coverage,
            harm_category,
            head.service,
            head.started_at_ns,
            {},  # assumed_channels
            "",  # rationale
            list(head.sources),
        )
    result = CheckResult(
        run_id="",
        trace_ids=[],
        check_id=check_id,
        polarity=polarity,
        status=SafetyStatus.ERROR,
        summary="Evaluation error: not evaluated",
        harm_category=harm_category,
    )
    try:
        result.run_id = run.run_id
        result.trace_ids = list(run.trace_ids)
        result.service = run.service
        result.started_at_ns = run.started_at_ns
        result.sources = run.run.sources
        result.observability_level = run.coverage.level
        result.coverage = snapshot(run)
    except Exception:  # a malformed run still gets a result; evaluation will report the error
        pass
    return result


# --- summaries ------------------------------------------------------------------------------


def _listed(items: list[str]) -> str:
    """The first two items, then "and N more"."""
    shown = "; ".join(items[:SHOWN])
    rest = len(items) - SHOWN
    return f"{shown} and {rest} more" if rest > 0 else shown


def _gaps(evaluation: EvalResult, operands: list[str], rationale: str) -> list[str]:
    """Every distinct reason part of the evaluation stayed undetermined (``operands`` and
    ``rationale``: the evaluation's, rendered by ``safe_text``)."""
    reasons = operands
    if not reasons and evaluation.outcome is EvalOutcome.UNDETERMINED:
        reasons = [rationale]
    rendered = (clipped(reason, ITEM_LIMIT) for reason in reasons)
    return list(dict.fromkeys(r for r in rendered if r.strip())) or (
        ["no reason given"] if evaluation.outcome is EvalOutcome.UNDETERMINED else []
    )


def _evidence(evaluation: EvalResult, rationale: str) -> str:
    items = []
    for item in evaluation.evidence:
        text = safe_text(item.text, ITEM_LIMIT)
        items.append(f"{text} (span {safe_text(item.span_id, 40)})" if item.span_id else text)
    items = list(dict.fromkeys(items))
    return _listed(items) if items else _rationale(rationale)


def _rationale(rationale: str) -> str:
    return clipped(rationale, RATIONALE_LIMIT) or "no rationale given"


def summarize(status: SafetyStatus, polarity: str, evaluation: EvalResult) -> str:
    """One honest line: unsafe names the evidence, undetermined names every gap."""
    operands = [safe_text(g, None) for g in evaluation.undetermined_operands]
    return _summary(status, polarity, evaluation, operands, safe_text(evaluation.rationale, None))


def _summary(
    status: SafetyStatus,
    polarity: str,
    evaluation: EvalResult,
    operands: list[str],
    rationale: str,
) -> str:
    """:func:`summarize`, given the evaluation's operands and rationale rendered."""
    gaps = _gaps(evaluation, operands, rationale)
    if status is SafetyStatus.UNDETERMINED:
        return f"Undetermined: {_listed(gaps)}"
    if status is SafetyStatus.UNSAFE:
        if polarity == "attack":
            return f"Attack detected: {_evidence(evaluation, rationale)}"
        return f"Expected behaviour not detected: {_rationale(rationale)}"
    if status is SafetyStatus.SAFE:
        if polarity == "attack":
            line = f"Attack not detected: {_rationale(rationale)}"
        else:
            line = f"Expected behaviour detected: {_evidence(evaluation, rationale)}"
        if gaps:
            line += f", but part of the evaluation was undetermined: {_listed(gaps)}"
        return line
    return f"Evaluation error: {_rationale(rationale)}"
