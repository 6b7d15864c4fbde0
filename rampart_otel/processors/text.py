""":func:`rampart_otel.render.safe_text`, with a fast path for text that is safe already.

Verdicts and reports render several short strings per check, nearly all of them plain; the
three substitutions ``safe_text`` applies find nothing in them. Every character any of them
matches is in ``_UNSAFE`` (escape sequences start with ESC or the 8-bit CSI, both controls),
so text without one, within the limit, is returned as it is: what ``safe_text`` returns too.
"""

from __future__ import annotations

import re
from typing import Any

from rampart_otel.render import DEFAULT_LIMIT
from rampart_otel.render import safe_text as _safe_text

__all__ = ["safe_text"]

_UNSAFE = re.compile(
    r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff\u2028\u2029"
    r"\ufdd0-\ufdef\ufffe\uffff\ud800-\udfff]"
)
_search = _UNSAFE.search


def safe_text(value: Any, limit: int | None = DEFAULT_LIMIT) -> str:
    """Exactly ``render.safe_text(value, limit)``."""
    if type(value) is str and (limit is None or len(value) <= limit) and _search(value) is None:
        return value
    return _safe_text(value, limit)
