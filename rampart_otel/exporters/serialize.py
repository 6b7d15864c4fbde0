"""Plain-JSON forms of the data model, shared by every JSON output.

Attribute values are attacker-influenced: bytes become hex, non-finite floats become
strings, anything else unexpected becomes its safe text, so a dump never fails.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from rampart_otel.channels import (
    ChannelCoverage,
    ChannelState,
    Coverage,
    CoverageSource,
    ReasonCode,
)
from rampart_otel.conventions.side_effects import unrecorded_payload
from rampart_otel.model import AgentRun, SideEffect, ToolCall, ToolScope
from rampart_otel.places import place
from rampart_otel.render import safe_text
from rampart_otel.vocabulary import STANDARD_KINDS


def jsonable(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, dict):
        return {str(key): jsonable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(item) for item in value]
    return safe_text(value, limit=None)


def _not_plain(value: Any) -> Any:
    raise TypeError("not plain JSON")


_PLAIN = json.JSONEncoder(allow_nan=False, default=_not_plain)
# What JSONEncoder.encode does with a str when ensure_ascii is on (the default).
_encode_str = json.encoder.encode_basestring_ascii


def plain_json(value: Any) -> tuple[Any, str]:
    """``value`` as plain JSON and its text, encoded once: ``value`` itself when ``json``
    takes it as it is (the usual case), else :func:`jsonable`'s copy of it."""
    try:
        return value, _PLAIN.encode(value)
    except (TypeError, ValueError):
        value = jsonable(value)
        return value, json.dumps(value)


def dumps_jsonable(value: Any) -> str:
    """``json.dumps(jsonable(value))``, without the walk when ``value`` is plain JSON already.

    For documents whose dict keys are all strings (every report document is built so).
    A value json cannot take as it is (bytes, a non-finite float, any other object) makes
    the fast attempt fail, and the document is then converted by :func:`jsonable`.
    """
    if type(value) is str:
        return _encode_str(value)
    return plain_json(value)[1]


def strings_json(items: Sequence[Any]) -> str:
    """``dumps_jsonable(list(items))``, joined directly when every item is a string (ids,
    sources, reasons: the usual case)."""
    try:
        return "[" + ", ".join([_encode_str(item) for item in items]) + "]"
    except TypeError:  # not a list of strings: the general path
        return dumps_jsonable(list(items))


def _optional_json(value: Any) -> str:
    """A string or None as JSON (anything else raises TypeError)."""
    return "null" if value is None else _encode_str(value)


def evidence_json(evidence: Sequence[Any]) -> str:
    """The ``evidence`` list of a report entry, as ``dumps_jsonable`` writes it."""
    try:
        return (
            "["
            + ", ".join(
                [
                    f'{{"trace_id": {_optional_json(item.trace_id)}, '
                    f'"span_id": {_optional_json(item.span_id)}, '
                    f'"text": {_encode_str(item.text)}}}'
                    for item in evidence
                ]
            )
            + "]"
        )
    except TypeError:  # a value that is not a string: the general path
        return dumps_jsonable(
            [
                {"trace_id": item.trace_id, "span_id": item.span_id, "text": item.text}
                for item in evidence
            ]
        )


def coverage_json(coverage: Coverage | None) -> str:
    """``dumps_jsonable(coverage_to_dict(coverage))`` (``{}`` for None), written directly:
    once per run in every report, and the largest part of it."""
    if not coverage:
        return "{}"
    try:
        return (
            "{"
            + ", ".join([_channel_json(key, c) for key, c in sorted(coverage.channels.items())])
            + "}"
        )
    except (TypeError, AttributeError, KeyError):  # a value not plain: the general path
        return dumps_jsonable(coverage_to_dict(coverage))


# Each member's value as JSON text, with what precedes it in a channel's entry: an enum's
# ``value`` is a property, read ~25 times per channel otherwise. A value not a member (a
# malformed coverage) raises KeyError: ``coverage_json`` takes the general path then.
_CODE_OPENS = {code: f'{{"code": {_encode_str(code.value)}, "span_ids": [' for code in ReasonCode}
_STATE_OPENS = {state: f': {{"state": {_encode_str(state.value)}, ' for state in ChannelState}
_SOURCES = {source: f'"source": {_encode_str(source.value)}, ' for source in CoverageSource}


# A reason code with no span (most of a run's: each fix, each kind no span showed), whole.
_BARE_CODES = {code: f"{opening}]}}" for code, opening in _CODE_OPENS.items()}


# Reason texts and hints as JSON, by text: most are the same from run to run (a kind no
# span showed, each way to close a gap, the longest), and a run's side-effect channels
# share their span ids. Bounded: texts hold trace data, never kept without limit.
_ENCODED: dict[object, str] = {}
_ENCODED_KEPT = 4096


def _kept(key: object, encoded: str) -> str:
    """``encoded``, kept in ``_ENCODED`` under ``key`` (bounded)."""
    if len(_ENCODED) >= _ENCODED_KEPT:
        _ENCODED.clear()
    _ENCODED[key] = encoded
    return encoded


def _encoded(text: str) -> str:
    """``text`` as JSON (``_ENCODED``, looked up first)."""
    return _kept(text, _encode_str(text))


def _ids_encoded(span_ids: tuple[str, ...]) -> str:
    """A reason code's span ids as the JSON between its brackets (``_ENCODED``)."""
    return _kept(span_ids, ", ".join([_encode_str(i) for i in span_ids]))


def _channel_json(key: str, channel: ChannelCoverage) -> str:
    reasons_in_words, hint_words = channel.words()  # read once: the words may be deferred
    known = _ENCODED.get
    hint = "" if hint_words is None else f', "hint": {known(hint_words) or _encoded(hint_words)}'
    # Each code's entry, written inline: a report's most frequent value (~25 per run).
    codes = ", ".join(
        [
            f"{_CODE_OPENS[r.code]}{known(r.span_ids) or _ids_encoded(r.span_ids)}]}}"
            if r.span_ids
            else _BARE_CODES[r.code]
            for r in channel.codes
        ]
    )
    reasons = ", ".join([known(reason) or _encoded(reason) for reason in reasons_in_words])
    return (
        f"{_encode_str(key)}{_STATE_OPENS[channel.state]}{_SOURCES[channel.source]}"
        f'"reasons": [{reasons}]{hint}, "reason_codes": [{codes}]}}'
    )


def ns_to_iso(ns: int | None) -> str | None:
    if ns is None:
        return None
    return datetime.fromtimestamp(ns / 1e9, tz=UTC).isoformat(timespec="microseconds")


def coverage_to_dict(coverage: Coverage) -> dict[str, Any]:
    return {
        key: {
            "state": channel.state.value,
            "source": channel.source.value,
            "reasons": channel.reasons,
            **({"hint": channel.hint} if channel.hint is not None else {}),
            "reason_codes": [
                {"code": reason.code.value, "span_ids": list(reason.span_ids)}
                for reason in channel.codes
            ],
        }
        for key, channel in sorted(coverage.channels.items())
    }


def tool_call_to_dict(call: ToolCall) -> dict[str, Any]:
    return {
        "name": call.name,
        "call_id": call.call_id,
        "arguments": jsonable(call.arguments),
        "arguments_captured": call.arguments_captured,
        "result": jsonable(call.result),
        "result_captured": call.result_captured,
        "status": call.status.value,
        "trace_id": call.trace_id,
        "span_ids": call.span_ids,
        "conventions": call.conventions,
        "from_history": call.from_history,
        **(
            {"namespace": call.namespace, "local_name": call.local_name}
            if call.local_name is not None
            else {}
        ),
    }


def tool_scope_to_dict(scope: ToolScope) -> dict[str, Any]:
    """One executed call's scope: a state from a closed set and the evidence behind it."""
    return {
        "tool_call_index": scope.call_index,
        "tool": scope.tool,
        "state": scope.state.value,
        "evidence": scope.evidence.value if scope.evidence is not None else None,
        "io_span_ids": list(scope.io_span_ids),
        "exempt_kinds": list(scope.exempt_kinds),
        "remote": scope.remote,
        "span_id": scope.span_id,
        "kinds": list(scope.kinds),
        "attested": list(scope.attested),
        # A destination of "" for both: the arguments were not captured (unknown).
        "unmet": [{"argument": d.argument, "host": d.host} for d in scope.unmet],
        "remote_target": scope.remote_target,
        # Each standard side-effect kind's place at this call (recorded, attested, ...).
        "places": {kind: place(scope, kind).value for kind in STANDARD_KINDS},
    }


def side_effect_to_dict(effect: SideEffect) -> dict[str, Any]:
    return {
        "kind": effect.kind,
        "details": jsonable(effect.details),
        "derived": jsonable(effect.derived),
        "trace_id": effect.trace_id,
        "span_id": effect.span_id,
        "tool_call_index": effect.tool_call_index,
        "convention": effect.convention,
        # Payload fields its span did not record (a request body): a value may have left there.
        "unrecorded": list(unrecorded_payload(effect.kind, effect.details, effect.derived)),
    }


def agent_run_to_dict(run: AgentRun) -> dict[str, Any]:
    return {
        "run_id": run.run_id,
        "revision": run.run.revision,
        "trace_ids": run.trace_ids,
        "sources": run.run.sources,
        "session_id": run.run.session_id,
        "service": run.service,
        "started_at": ns_to_iso(run.started_at_ns),
        "span_count": len(run.run.spans),
        "observability_level": run.coverage.level.value,
        "fragment": run.fragment is not None,
        "conventions": {
            name: {"spans": use.spans, "not_understood": use.not_understood}
            for name, use in sorted(run.conventions.items())
        },
        "input": [
            {"text": jsonable(m.text), "span_id": m.span_id, "trace_id": m.trace_id}
            for m in run.user_input
        ],
        "response": {
            "text": jsonable(run.response.text),
            "earlier": jsonable(run.response.earlier),
            "span_id": run.response.span_id,
        },
        "tool_calls": [tool_call_to_dict(call) for call in run.tool_calls],
        "side_effects": [side_effect_to_dict(effect) for effect in run.side_effects],
        "tool_scopes": [tool_scope_to_dict(scope) for scope in run.tool_scopes],
        "stitched": [
            {"trace_id": s.trace_id, "how": s.how.value, "via": s.via} for s in run.run.stitched
        ],
        "coverage": coverage_to_dict(run.coverage),
        "integrity": [
            {"kind": finding.kind, "message": finding.message, "span_ids": finding.span_ids}
            for finding in run.integrity
        ],
    }
