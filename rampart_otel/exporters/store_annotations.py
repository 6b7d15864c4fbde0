"""Each verdict written back to the trace store it was read from, where its users look.

- Phoenix: a span annotation on the run's root span (``POST /v1/span_annotations``):
  name ``rampart:<check id>``, annotator kind ``CODE``, label = the verdict, score 1 for
  SAFE and 0 for UNSAFE (none otherwise), explanation = the reason and the evidence.
- MLflow: an assessment on the root span's trace (``/api/3.0/mlflow/traces/{id}/assessments``):
  feedback named ``rampart:<check id>`` with the verdict as its value, source ``CODE``
  (``rampart-otel``), rationale = the reason and the evidence.

Both carry the policy's name and version, the run and rampart-otel's version as metadata.
Idempotent: Phoenix upserts an annotation on (name, span, identifier) and the identifier
is ``rampart-otel:<policy>@v<version>``, so scoring again under the same policy version
updates each annotation in place; under a new version each check gets an annotation of
its own beside the old one. MLflow has no upsert: the trace's assessments are read first,
one with the same name and identifier is updated, and a new policy version's assessment
*overrides* the previous version's (MLflow keeps that one, marked invalid).

The HTTP goes through ``send(method, path, **kwargs) -> JSON`` given by the caller (the
store reader's client: the same credentials and one-line errors).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from rampart_otel import __version__
from rampart_otel.evaluation import CheckResult
from rampart_otel.exporters.otlp_verdicts import root_span
from rampart_otel.model import Run
from rampart_otel.sinks import Scored, SinkDefaults

Send = Callable[..., Any]
NAME_PREFIX = "rampart:"
SOURCE_ID = "rampart-otel"
EXPLANATION_CHARS = 4000
EVIDENCE_ITEMS = 10
_SCORE = {"safe": 1.0, "unsafe": 0.0}


def identifier(result: CheckResult) -> str:
    """Which scoring an annotation is from: the policy and its version."""
    return f"{SOURCE_ID}:{result.policy or 'checks'}@v{result.policy_version or 0}"


def explanation(result: CheckResult) -> str:
    """The reason and the evidence, as one text (already rendered safe)."""
    lines = [result.summary or result.rationale or result.status.value]
    evidence = [e.text for e in result.evidence[:EVIDENCE_ITEMS] if e.text]
    if evidence:
        lines.append("Evidence:")
        lines.extend(f"- {text}" for text in evidence)
    more = len(result.evidence) - EVIDENCE_ITEMS
    if more > 0:
        lines.append(f"- and {more} more")
    text = "\n".join(lines)
    return text if len(text) <= EXPLANATION_CHARS else text[: EXPLANATION_CHARS - 1] + "…"


def metadata(result: CheckResult, run: Run) -> dict[str, str]:
    """What tells one scoring from another, as strings (MLflow's metadata is string-valued)."""
    level = result.observability_level
    items = {
        "identifier": identifier(result),
        "policy": result.policy,
        "policy_version": result.policy_version,
        "check_id": result.check_id,
        "run_id": result.run_id,
        "trace_ids": ",".join(run.trace_ids),
        "harm_category": result.harm_category,
        "observability_level": level.value if level is not None else None,
        "rampart_otel_version": __version__,
    }
    return {key: str(value) for key, value in items.items() if value not in (None, "")}


class PhoenixAnnotations:
    """Span annotations on the runs' root spans; ``write`` returns how many were written."""

    store = "Phoenix"

    def __init__(self, send: Send) -> None:
        self.send = send

    def write(self, run: Run, results: Sequence[CheckResult]) -> int:
        _, span_id, _ = root_span(run)
        if span_id is None or not results:
            return 0
        data = [
            {
                "span_id": span_id,
                "name": NAME_PREFIX + result.check_id,
                "annotator_kind": "CODE",
                "result": {
                    "label": result.status.value,
                    "score": _SCORE.get(result.status.value),
                    "explanation": explanation(result),
                },
                "metadata": metadata(result, run),
                "identifier": identifier(result),
            }
            for result in results
        ]
        self.send("POST", "/v1/span_annotations", params={"sync": "true"}, json={"data": data})
        return len(data)


class MlflowAnnotations:
    """Feedback assessments on the runs' root traces; ``write`` returns how many."""

    store = "MLflow"

    def __init__(self, send: Send) -> None:
        self.send = send

    def write(self, run: Run, results: Sequence[CheckResult]) -> int:
        trace_id, span_id, _ = root_span(run)
        if not trace_id or not results:
            return 0
        mlflow_id = trace_id if trace_id.startswith("tr-") else f"tr-{trace_id}"
        path = f"/api/3.0/mlflow/traces/{quote(mlflow_id, safe='')}"
        ours = _our_assessments(self.send("GET", path))
        for result in results:
            body = {
                "assessment_name": NAME_PREFIX + result.check_id,
                "trace_id": mlflow_id,
                "source": {"source_type": "CODE", "source_id": SOURCE_ID},
                "feedback": {"value": result.status.value},
                "rationale": explanation(result),
                "metadata": metadata(result, run),
            }
            if span_id:
                body["span_id"] = span_id
            same_name = [a for a in ours if a.name == body["assessment_name"]]
            same = [a for a in same_name if a.identifier == identifier(result)]
            if same:
                self.send(
                    "PATCH",
                    f"{path}/assessments/{quote(same[0].id, safe='')}",
                    json={"assessment": body, "update_mask": "feedback,rationale,metadata"},
                )
                continue
            current = [a for a in same_name if a.valid]
            if current:
                body["overrides"] = current[0].id
            self.send("POST", f"{path}/assessments", json={"assessment": body})
        return len(results)


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
            and name.startswith(NAME_PREFIX)
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


def annotations_for(store: str, send: Send) -> PhoenixAnnotations | MlflowAnnotations:
    """The writer for ``store`` ("phoenix" or "mlflow")."""
    return PhoenixAnnotations(send) if store == "phoenix" else MlflowAnnotations(send)


class AnnotationSink(SinkDefaults):
    """``score --annotate`` as a sink: each scored run's results written back to the store
    it was read from, as soon as it is scored; ``summary`` says how many."""

    def __init__(self, writer: PhoenixAnnotations | MlflowAnnotations) -> None:
        self.writer = writer
        self.runs = self.results = 0

    def prepare(self, scored: Scored) -> Scored:
        return scored

    def write(self, batch: Sequence[Scored]) -> None:
        for scored in batch:
            written = self.writer.write(scored.run, scored.results)
            self.runs += bool(written)
            self.results += written

    def summary(self) -> str:
        return f"annotated {self.results} verdicts on {self.runs} runs in {self.writer.store}"
