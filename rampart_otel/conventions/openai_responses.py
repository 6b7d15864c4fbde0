"""OpenAI Responses API ``Response`` objects, as instrumentations record them whole.

OpenInference's Agents SDK spans put the model's whole ``Response`` in ``output.value``
and flatten only some of its output item types into ``llm.output_messages``; the others
(``mcp_call``, ``local_shell_call``, ``shell_call``, ``apply_patch_call``, ...) are left
out there. The JSON is the complete account, so it is what says whether the flattened
messages list every call the model made, and it is the output when they were hidden.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rampart_otel.conventions.helpers import load_json
from rampart_otel.conventions.interface import ToolReport
from rampart_otel.model import Span

# Items that call one of the agent's own tools, by name and ``call_id`` (the SDK runs them).
CALL_ITEMS = frozenset({"function_call", "custom_tool_call"})
QUIET_ITEMS = frozenset({"reasoning"})  # neither a call nor an answer
TEXT_PARTS = {"output_text": "text", "refusal": "refusal"}  # message part type → text key


@dataclass(slots=True)
class ResponseOutput:
    """What a ``Response``'s output items hold: the calls of the agent's tools, the
    texts, and what was left unread."""

    requests: list[ToolReport] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    item_types: list[str] = field(default_factory=list)  # every output item's type, in order
    unread_parts: list[str] = field(default_factory=list)  # message content part types


def output_items(value: Any) -> list[dict[str, Any]] | None:
    """The ``output`` items of a ``Response`` JSON text; None when ``value`` is not one."""
    if not isinstance(value, str) or '"object":' not in value or '"response"' not in value:
        return None  # cheap: anything else
    decoded = load_json(value)
    if not isinstance(decoded, dict) or decoded.get("object") != "response":
        return None
    items = decoded.get("output")
    if not isinstance(items, list):
        return None
    return [item for item in items if isinstance(item, dict)]


def read(items: list[dict[str, Any]], span: Span, convention: str) -> ResponseOutput:
    """Requested function calls (by ``call_id``), answer text (a refusal's too), every item's
    type, and the message parts that hold no text we read."""
    found = ResponseOutput()
    for item in items:
        kind = item.get("type")
        kind = kind if isinstance(kind, str) else repr(kind)
        found.item_types.append(kind)
        if kind in CALL_ITEMS:
            raw = item.get("arguments", item.get("input"))
            found.requests.append(
                ToolReport.requested(
                    span, convention, item.get("name"), item.get("call_id"), raw, raw is not None
                )
            )
        elif kind == "message":
            parts = item.get("content")
            for part in parts if isinstance(parts, list) else [parts]:
                part_type = part.get("type") if isinstance(part, dict) else None
                key = TEXT_PARTS.get(part_type) if isinstance(part_type, str) else None
                text = part.get(key) if key and isinstance(part, dict) else None
                if isinstance(text, str):
                    found.texts.append(text)
                else:
                    found.unread_parts.append(str(part_type))
    return found
