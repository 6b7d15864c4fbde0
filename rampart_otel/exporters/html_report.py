"""``score --format html``: one self-contained page of scored runs.

Each run is turned into plain data here (spans for the waterfall, tool calls, side effects,
coverage, the results and the channels their gaps come from) and streamed into the page as
JSON; the page's script renders the table, the summary and a run's view lazily, so a
report of many thousands of runs opens at once. See ``html_page`` for how content is kept
inert. Trace text is shown through ``render.shown``: values that look like secrets are
masked unless ``--show-secrets`` (a page like this one is meant to be shared).
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Iterable
from typing import IO, Any

from rampart_otel.evaluation import CheckResult, PopulationReport, SafetyStatus
from rampart_otel.exporters.html_page import (
    error_items,
    json_items,
    page_assets,
    render_page,
    script_json,
)
from rampart_otel.exporters.reasons import headline, split_fix, undetermined
from rampart_otel.exporters.serialize import jsonable, ns_to_iso, side_effect_to_dict
from rampart_otel.lazy_regex import LazyPattern
from rampart_otel.model import AgentRun, InputError, Span
from rampart_otel.render import shown
from rampart_otel.run_graph import run_graph

__all__ = ["run_view", "write_html_report"]

TEXT_LIMIT = 2_000  # characters of a tool argument, result or response shown
ATTRIBUTE_LIMIT = 160  # characters of a span attribute's value shown
ATTRIBUTES_PER_SPAN = 40


MASK_MARGIN = 256  # characters past a limit still scanned, so a cut never halves a secret


def _clip(value: Any, limit: int) -> str | None:
    """Trace content as the page shows it: secrets masked (``shown``), then cut."""
    if value is None:
        return None
    text = value if isinstance(value, str) else _json_text(value)
    head = shown(text[: limit + MASK_MARGIN])
    return head if len(text) <= limit else head[:limit] + f" … ({len(text) - limit} more)"


def _text(value: str | None) -> str | None:
    return None if value is None else shown(value)


def _json_text(value: Any) -> str:
    import json

    return json.dumps(jsonable(value), ensure_ascii=False)


def _span_view(span: Span, depth: int, origin: int) -> dict[str, Any]:
    start = span.start_ns
    end = span.end_ns
    attributes = list(span.attributes.items())
    return {
        "id": span.span_id,
        "parent": span.parent_span_id,
        "depth": depth,  # in the run graph's tree (the waterfall lists spans in its order)
        "name": shown(span.name),
        "kind": span.kind.value,
        "start": None if start is None else (start - origin) / 1e6,  # ms from the run's start
        "end": None if end is None else (end - origin) / 1e6,
        "status": span.status_code.value,
        "attributes": [
            [key, _clip(value, ATTRIBUTE_LIMIT)] for key, value in attributes[:ATTRIBUTES_PER_SPAN]
        ],
        "more_attributes": max(len(attributes) - ATTRIBUTES_PER_SPAN, 0),
        "events": [event.name for event in span.events[:20]],
    }


# A part of a permalink kept as it is: what is safe in a URL fragment and an HTML id alike.
_PLAIN_ID = LazyPattern(r"[A-Za-z0-9_-]{1,100}")


def anchor(kind: str, *parts: str) -> str:
    """A permalink's name (``run-…``, ``result-…``) from run ids and check ids, which traces
    and policies supply: each part kept when it is plain (letters, digits, ``_``, ``-``, at
    most 100), else a short hash of it; parts joined by ``.``, which no plain part holds.
    The page makes repeated names unique (``~2``)."""
    return f"{kind}-" + ".".join(
        part if _PLAIN_ID.fullmatch(part) else "h" + hashlib.sha256(part.encode()).hexdigest()[:16]
        for part in parts
    )


def _run_parts(run_id: str, revision: int) -> list[str]:
    return [run_id, f"r{revision}"] if revision else [run_id]


def _run_anchor(run_id: str, revision: int) -> str:
    return anchor("run", *_run_parts(run_id, revision))


def _result_view(result: CheckResult, revision: int = 0) -> dict[str, Any]:
    why = undetermined(result) if result.status is SafetyStatus.UNDETERMINED else None
    return {
        "anchor": anchor("result", *_run_parts(result.run_id, revision), result.check_id),
        "check": result.check_id,
        "policy": result.policy,
        "polarity": result.polarity,
        "status": result.status.value,
        "harm": result.harm_category,
        "summary": _text(headline(why) if why else result.summary),
        # Most summaries restate the rationale, and an UNDETERMINED one restates the reasons
        # the run's coverage shows with their fix: each is said once (the JSON report has all).
        "rationale": None
        if why or (result.rationale and result.rationale in (result.summary or ""))
        else _text(result.rationale),
        "operands": [shown(operand) for operand in why.other] if why else [],
        "gaps": [gap.channel for gap in why.gaps] if why else [],
        "evidence": [{"span": item.span_id, "text": shown(item.text)} for item in result.evidence],
        "assumed": {key: source.value for key, source in result.assumed_channels.items()},
        "error": _text(result.error),
    }


def run_view(agent_run: AgentRun | None, results: list[CheckResult]) -> dict[str, Any]:
    """Everything the page shows of one run, as plain data."""
    first = results[0] if results else None
    if agent_run is None:  # the run could not be read: its results say why
        return {
            "id": first.run_id if first else "",
            "anchor": _run_anchor(first.run_id if first else "", 0),
            "service": _text(first.service) if first else None,
            "started": None,
            "sources": list(first.sources) if first else [],
            "level": None,
            "spans": [],
            "calls": [],
            "effects": [],
            "coverage": [],
            "input": [],
            "response": None,
            "integrity": [],
            "results": [_result_view(r) for r in results],
        }
    graph = run_graph(agent_run.run)
    starts = [span.start_ns for span in graph.spans if span.start_ns is not None]
    origin = min(starts) if starts else 0
    revision = agent_run.run.revision or 0
    views = [_result_view(r, revision) for r in results]
    # A side-effect kind with no span in the run is unobserved without a row of its own:
    # a gap on it gets one, so the page can show where the gap comes from.
    keys = set(agent_run.coverage.channels) | {key for v in views for key in v["gaps"]}
    coverage = [
        {
            "channel": key,
            "state": channel.state.value,
            "source": channel.source.value,
            "reasons": [shown(reason) for reason in reasons],
            "fix": shown(fix) if fix else None,
        }
        for key in sorted(keys)
        for channel in (agent_run.coverage.get(key),)
        for reasons, fix in (split_fix(channel),)
    ]
    return {
        "id": agent_run.run_id,
        "anchor": _run_anchor(agent_run.run_id, revision),
        "revision": agent_run.run.revision,
        "service": _text(agent_run.service),
        "started": ns_to_iso(agent_run.started_at_ns),
        "sources": list(agent_run.run.sources),
        "level": agent_run.coverage.level.value,
        "spans": [_span_view(span, depth, origin) for span, depth in graph.tree()],
        "calls": [
            {
                "name": _text(call.name),
                "status": call.status.value,
                "arguments": _clip(call.arguments, TEXT_LIMIT) if call.arguments_captured else None,
                "arguments_captured": call.arguments_captured,
                "result": _clip(call.result, TEXT_LIMIT) if call.result_captured else None,
                "result_captured": call.result_captured,
                "spans": call.span_ids,
            }
            for call in agent_run.tool_calls
        ],
        "effects": [
            side_effect_to_dict(effect)
            | {
                "tool": _text(agent_run.tool_calls[effect.tool_call_index].name)
                if effect.tool_call_index is not None
                else None,
                "details": {
                    key: _clip(value, ATTRIBUTE_LIMIT) for key, value in effect.details.items()
                },
            }
            for effect in agent_run.side_effects
        ],
        "coverage": coverage,
        "input": [_clip(message.text, TEXT_LIMIT) for message in agent_run.user_input],
        "response": _clip(agent_run.response.text, TEXT_LIMIT),
        "integrity": [shown(finding.message) for finding in agent_run.integrity],
        "results": views,
    }


def write_html_report(
    runs: Iterable[dict[str, Any]],
    out: IO[str],
    *,
    title: str,
    population: Callable[[], PopulationReport],
    errors: list[InputError],
) -> None:
    """Stream the page: ``runs`` (from :func:`run_view`) are consumed as it is written;
    ``population`` and ``errors`` are read after them."""

    def summary() -> Any:
        return script_json(
            {
                "population": dataclasses.asdict(population()),
                "input_errors": error_items(errors),
            }
        )

    render_page(
        "report.html.j2",
        out,
        title=title,
        assets=page_assets("report.js"),
        runs=json_items(runs),
        summary=summary,
    )
