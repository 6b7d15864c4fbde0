"""Each run's verdicts written back to the trace store it lives in, where its users look.

What is written is decided once, as plain data (:func:`run_annotation`: a
:class:`RunAnnotation`, JSON-able, so the collector can queue it durably and write it
later), and written by a store's writer over the store's REST API:

- **Phoenix** (:class:`PhoenixAnnotations`): *trace* annotations on the run's root trace
  (``POST /v1/trace_annotations``), and under ``--group-by session`` *session* annotations
  too (``POST /v1/session_annotations``): one named ``rampart`` (the roll-up: the worst
  verdict, and which checks failed) and one per check, ``rampart:<check id>``. Each is a
  categorical label (``unsafe``, ``error``, ``undetermined``, ``safe``) with a score
  (0, 0.25, 0.5, 1) under an annotation config of its name (categorical, maximise, created
  and assigned to the project on first use), so Phoenix colours UNSAFE apart from SAFE and
  lists a failing roll-up first.
- **MLflow** (:class:`MlflowAnnotations`): feedback assessments on the root span's trace,
  the same names, each check's value ``fail``/``pass`` (which MLflow shows red and green),
  ``undetermined``, or an assessment error for ERROR; the roll-up written last, so an
  opened trace lists it first; and the trace tags ``rampart_otel.verdict`` (the worst
  verdict) and ``rampart_otel.failing`` (the failing checks), to filter the traces list by.

The reason and the evidence are the explanation (rationale), with secrets masked unless
``show_secrets``. Idempotent: Phoenix upserts an annotation on (name, target,
identifier); MLflow's assessments are read first and ours updated in place. A check's
identifier is ``rampart-otel:<policy>@v<version>`` (a new policy version's verdicts stand
beside, or in MLflow override, the old ones); the roll-up's is ``rampart-otel``: one per
run, the latest scoring's.

The HTTP goes through ``send(method, path, **kwargs) -> JSON`` given by the caller (the
store reader's client: the same credentials and one-line errors).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import quote

from rampart_otel import __version__
from rampart_otel.errors import UserError
from rampart_otel.evaluation import CheckResult
from rampart_otel.exporters.otlp_verdicts import root_span
from rampart_otel.model import Run
from rampart_otel.secret_values import mask_secrets
from rampart_otel.sinks import Scored, SinkDefaults

Send = Callable[..., Any]
ROLLUP = "rampart"  # sorts before every "rampart:<check>": listed first
NAME_PREFIX = "rampart:"
SOURCE_ID = "rampart-otel"
EXPLANATION_CHARS = 4000
EVIDENCE_ITEMS = 10
WORST_FIRST = ("unsafe", "error", "undetermined", "safe")
FAILING = ("unsafe", "error")
# Phoenix: a categorical label's score; its config's midpoint (0.5) is neither good nor bad.
PHOENIX_SCORE = {"safe": 1.0, "undetermined": 0.5, "error": 0.25, "unsafe": 0.0}
# MLflow colours only the values it knows: "pass" green, "fail" red; ERROR is an error.
MLFLOW_VALUE = {"safe": "pass", "unsafe": "fail", "undetermined": "undetermined"}
TAG_PREFIX = "rampart_otel."  # trace tags we write: never read back as the agent's resource
TAG_VERDICT = TAG_PREFIX + "verdict"
TAG_FAILING = TAG_PREFIX + "failing"
TAG_CHARS = 250
ROLLUP_TEXT = "rampart-otel: the worst verdict of a run's checks"


def identifier(result: CheckResult) -> str:
    """Which scoring a check's annotation is from: the policy and its version."""
    return f"{SOURCE_ID}:{result.policy or 'checks'}@v{result.policy_version or 0}"


def explanation(result: CheckResult, *, show_secrets: bool = False) -> str:
    """The reason and the evidence, as one text (rendered safe already; secrets masked
    unless ``show_secrets``)."""
    lines = [result.summary or result.rationale or result.status.value]
    evidence = [e.text for e in result.evidence[:EVIDENCE_ITEMS] if e.text]
    if evidence:
        lines.append("Evidence:")
        lines.extend(f"- {text}" for text in evidence)
    more = len(result.evidence) - EVIDENCE_ITEMS
    if more > 0:
        lines.append(f"- and {more} more")
    text = "\n".join(lines)
    if not show_secrets:
        text = mask_secrets(text)
    return _clip(text, EXPLANATION_CHARS)


def metadata(result: CheckResult, run: Run) -> dict[str, str]:
    """What tells one scoring from another, as strings (MLflow's metadata is string-valued)."""
    level = result.observability_level
    items = {
        "identifier": identifier(result),
        "verdict": result.status.value,
        "policy": result.policy,
        "policy_version": result.policy_version,
        "check_id": result.check_id,
        "run_id": result.run_id,
        "revision": run.revision,
        "trace_ids": ",".join(run.trace_ids),
        "harm_category": result.harm_category,
        "observability_level": level.value if level is not None else None,
        "tenant": run.tenant,  # the collector tenant that sent the run, if any
        "rampart_otel_version": __version__,
    }
    return {key: str(value) for key, value in items.items() if value not in (None, "")}


@dataclass(frozen=True, slots=True)
class Annotation:
    """One annotation: a check's verdict, or the run's roll-up (``check_id`` empty)."""

    name: str
    verdict: str  # safe, unsafe, undetermined, error
    explanation: str
    identifier: str
    metadata: dict[str, str] = field(default_factory=dict)
    check_id: str = ""


@dataclass(frozen=True, slots=True)
class RunAnnotation:
    """What is written back for one scored run revision: where (its root trace and span,
    its session) and the roll-up then each check's annotation."""

    run_id: str
    revision: int
    trace_id: str
    span_id: str | None
    session_id: str | None
    rollup: Annotation
    checks: tuple[Annotation, ...]

    def as_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunAnnotation:
        return cls(
            **{
                **data,
                "rollup": Annotation(**data["rollup"]),
                "checks": tuple(Annotation(**item) for item in data["checks"]),
            }
        )


def worst(verdicts: Iterable[str]) -> str:
    """The worst of these verdicts (UNSAFE, then ERROR, UNDETERMINED, SAFE)."""
    given = set(verdicts)
    return next((v for v in WORST_FIRST if v in given), "undetermined")


def run_annotation(
    scored: Scored, *, show_secrets: bool = False, session: bool = False
) -> RunAnnotation | None:
    """The annotations of one scored run; None when it has no result or no trace.
    ``session``: the run is a conversation (``--group-by session``), annotated as one too."""
    run, results = scored.run, scored.results
    trace_id, span_id, _ = root_span(run)
    if not results or not trace_id:
        return None
    checks = tuple(
        Annotation(
            NAME_PREFIX + result.check_id,
            result.status.value,
            explanation(result, show_secrets=show_secrets),
            identifier(result),
            metadata(result, run),
            result.check_id,
        )
        for result in results
    )
    verdict = worst(check.verdict for check in checks)
    failing = [c for c in checks if c.verdict in FAILING]
    lines = [_rollup_line(verdict, checks)]
    lines += [f"- {c.check_id}: {c.explanation.splitlines()[0]}" for c in failing]
    rollup = Annotation(
        ROLLUP,
        verdict,
        _clip("\n".join(lines), EXPLANATION_CHARS),
        SOURCE_ID,
        {
            "identifier": SOURCE_ID,
            "verdict": verdict,
            "failing_checks": ",".join(c.check_id for c in failing),
            "run_id": run.run_id,
            "revision": str(run.revision),
            "trace_ids": ",".join(run.trace_ids),
            **({"tenant": run.tenant} if run.tenant else {}),
            "rampart_otel_version": __version__,
        },
    )
    return RunAnnotation(
        run.run_id,
        run.revision,
        trace_id,
        span_id,
        run.session_id if session else None,
        rollup,
        checks,
    )


def _rollup_line(verdict: str, checks: Sequence[Annotation]) -> str:
    named = [c.check_id for c in checks if c.verdict == verdict]
    if verdict == "safe":
        return f"SAFE: all {len(checks)} checks"
    return f"{verdict.upper()}: {', '.join(named)} ({len(named)} of {len(checks)} checks)"


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- Phoenix ------------------------------------------------------------------------------


class PhoenixAnnotations:
    """Trace (and session) annotations; ``write`` returns how many checks were written."""

    store = "Phoenix"

    def __init__(self, send: Send, project: str) -> None:
        self.send = send
        self.project = project
        self._configured: set[str] = set()  # annotation configs known to exist and assigned

    def write(self, annotation: RunAnnotation) -> int:
        items = [annotation.rollup, *annotation.checks]
        self._configure([item.name for item in items])
        self.send(
            "POST",
            "/v1/trace_annotations",
            params={"sync": "true"},
            json={"data": [_phoenix(item, trace_id=annotation.trace_id) for item in items]},
        )
        if annotation.session_id:
            self.send(
                "POST",
                "/v1/session_annotations",
                params={"sync": "true"},
                json={"data": [_phoenix(item, session_id=annotation.session_id) for item in items]},
            )
        return len(annotation.checks)

    def _configure(self, names: list[str]) -> None:
        """A categorical config for each name (the labels, their scores: Phoenix colours by
        them), assigned to the project; once per name and writer."""
        project = quote(self.project, safe="")
        for name in names:
            if name in self._configured:
                continue
            config = {
                "name": name,
                "type": "CATEGORICAL",
                "description": ROLLUP_TEXT if name == ROLLUP else "rampart-otel's verdict",
                "optimization_direction": "MAXIMIZE",
                "values": [{"label": v, "score": PHOENIX_SCORE[v]} for v in WORST_FIRST],
            }
            try:
                self.send("POST", "/v1/annotation_configs", json=config)
            except UserError as error:
                if "HTTP 409" not in str(error):  # 409: it exists (ours, or the user's)
                    raise
            self.send("PUT", f"/v1/projects/{project}/annotation_configs/{quote(name, safe='')}")
            self._configured.add(name)


def _phoenix(item: Annotation, **target: str) -> dict[str, Any]:
    return {
        **target,
        "name": item.name,
        "annotator_kind": "CODE",
        "result": {
            "label": item.verdict,
            "score": PHOENIX_SCORE.get(item.verdict),
            "explanation": item.explanation,
        },
        "metadata": item.metadata,
        "identifier": item.identifier,
    }


# -- MLflow -------------------------------------------------------------------------------


class MlflowAnnotations:
    """Feedback assessments and trace tags; ``write`` returns how many checks were written."""

    store = "MLflow"

    def __init__(self, send: Send) -> None:
        self.send = send

    def write(self, annotation: RunAnnotation) -> int:
        trace_id = annotation.trace_id
        mlflow_id = trace_id if trace_id.startswith("tr-") else f"tr-{trace_id}"
        path = f"/api/3.0/mlflow/traces/{quote(mlflow_id, safe='')}"
        ours = _our_assessments(self.send("GET", path))
        # The roll-up last: an opened trace lists the newest first.
        for item in [*annotation.checks, annotation.rollup]:
            self._assess(path, mlflow_id, annotation.span_id, item, ours)
        rollup = annotation.rollup
        tags = {
            TAG_VERDICT: rollup.verdict,
            TAG_FAILING: _clip(rollup.metadata.get("failing_checks", ""), TAG_CHARS),
        }
        for key, value in tags.items():
            self.send("PATCH", f"{path}/tags", json={"key": key, "value": value})
        return len(annotation.checks)

    def _assess(
        self,
        path: str,
        mlflow_id: str,
        span_id: str | None,
        item: Annotation,
        ours: list[_Assessment],
    ) -> None:
        feedback: dict[str, Any] = {"value": MLFLOW_VALUE.get(item.verdict)}
        if item.verdict == "error":
            feedback = {
                "error": {
                    "error_code": "RAMPART_OTEL_ERROR",
                    "error_message": item.explanation.splitlines()[0],
                }
            }
        body: dict[str, Any] = {
            "assessment_name": item.name,
            "trace_id": mlflow_id,
            "source": {"source_type": "CODE", "source_id": SOURCE_ID},
            "feedback": feedback,
            "rationale": item.explanation,
            "metadata": item.metadata,
        }
        if span_id:
            body["span_id"] = span_id
        same_name = [a for a in ours if a.name == item.name]
        same = [a for a in same_name if a.identifier == item.identifier]
        if same:
            self.send(
                "PATCH",
                f"{path}/assessments/{quote(same[0].id, safe='')}",
                json={"assessment": body, "update_mask": "feedback,rationale,metadata"},
            )
            return
        current = [a for a in same_name if a.valid]
        if current:
            body["overrides"] = current[0].id
        self.send("POST", f"{path}/assessments", json={"assessment": body})


@dataclass(frozen=True, slots=True)
class _Assessment:
    name: str
    id: str
    identifier: str | None
    valid: bool


def _our_assessments(answer: object) -> list[_Assessment]:
    """Our assessments among those MLflow answered for a trace (``GET traces/{id}``). The
    answer is the store's: one not of MLflow's shape, or without an id to update or
    override, is not ours, so a new one is written beside it."""
    trace = answer.get("trace") if isinstance(answer, dict) else None
    info = trace.get("trace_info") if isinstance(trace, dict) else None
    listed = info.get("assessments") if isinstance(info, dict) else None
    ours = []
    for item in listed if isinstance(listed, list) else ():
        if not isinstance(item, dict):
            continue
        name, found, source = (item.get(k) for k in ("assessment_name", "assessment_id", "source"))
        meta = item.get("metadata")
        if not (
            isinstance(name, str)
            and (name == ROLLUP or name.startswith(NAME_PREFIX))
            and isinstance(found, str)
            and found
            and isinstance(source, dict)
            and source.get("source_id") == SOURCE_ID
        ):
            continue
        mark = meta.get("identifier") if isinstance(meta, dict) else None
        ours.append(
            _Assessment(
                name, found, mark if isinstance(mark, str) else None, item.get("valid") is not False
            )
        )
    return ours


Writer = PhoenixAnnotations | MlflowAnnotations


def annotations_for(store: str, send: Send, name: str = "default") -> Writer:
    """The writer for ``store`` ("phoenix" or "mlflow"); ``name`` is the Phoenix project."""
    return PhoenixAnnotations(send, name) if store == "phoenix" else MlflowAnnotations(send)


GIVE_UP_AFTER = 3  # runs in a row the store refused: the rest are not tried


class AnnotationSink(SinkDefaults):
    """``score --annotate`` as a sink: each scored run's verdicts written back to the store
    it was read from, as soon as it is scored. A run the store refuses is counted and the
    next one tried; after ``GIVE_UP_AFTER`` refused in a row the rest are only counted (a
    store that is down is not asked once per run). ``summary`` says what was written and
    ``failure`` what was not."""

    def __init__(self, writer: Writer, *, show_secrets: bool = False, session: bool = False):
        self.writer = writer
        self.show_secrets = show_secrets
        self.session = session
        self.runs = self.results = 0
        self.failed_runs = self.failed_results = 0
        self.refused_in_a_row = 0
        self.first_error: str | None = None

    def prepare(self, scored: Scored) -> RunAnnotation | None:
        return run_annotation(scored, show_secrets=self.show_secrets, session=self.session)

    def write(self, batch: Sequence[RunAnnotation | None]) -> None:
        for annotation in batch:
            if annotation is None:
                continue
            if self.refused_in_a_row >= GIVE_UP_AFTER:
                self._failed(annotation, None)
                continue
            try:
                written = self.writer.write(annotation)
            except UserError as error:  # the store's one-line answer
                self._failed(annotation, str(error))
                continue
            self.refused_in_a_row = 0
            self.runs += bool(written)
            self.results += written

    def _failed(self, annotation: RunAnnotation, error: str | None) -> None:
        self.failed_runs += 1
        self.failed_results += len(annotation.checks)
        if error is not None:
            self.refused_in_a_row += 1
            self.first_error = self.first_error or error

    def summary(self) -> str:
        return f"annotated {self.results} verdicts on {self.runs} runs in {self.writer.store}"

    def failure(self) -> str | None:
        """What was not written back, or None when everything was."""
        if not self.failed_runs:
            return None
        given_up = (
            f"; after {GIVE_UP_AFTER} runs refused in a row the rest were not tried"
            if self.refused_in_a_row >= GIVE_UP_AFTER
            else ""
        )
        return (
            f"{self.failed_results} verdicts on {self.failed_runs} runs were not written back "
            f"to {self.writer.store}{given_up}: {self.first_error}"
        )
