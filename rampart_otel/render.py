"""The one way trace-supplied text reaches any output.

Trace content is attacker-influenced: a tool argument can carry terminal escape sequences,
bidi overrides, lone surrogates or megabytes of text. ``safe_text`` cannot raise, keeps output
on one line, strips every control sequence and every character no output encoding or XML
document can hold, so a hostile value can neither crash nor repaint a report.

``shown_text`` is ``safe_text`` for trace content in an output a person reads (terminal,
JUnit, HTML): values that look like secrets (``secret_values``) are masked, unless the
command runs inside ``secrets_shown()`` (``--show-secrets``). Verdicts and JSON keep raw
values: masking happens only here, when text is written for a reader. The switch is a
context variable, so a command sets it once around its writers (forked workers inherit it).
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from rampart_otel.lazy_regex import LazyPattern

DEFAULT_LIMIT = 200

# CSI / OSC / other ESC sequences first, then any remaining C0/C1 control or bidi/format char.
_ESCAPE_SEQUENCE = LazyPattern(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC, BEL- or ST-terminated
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"  # DCS / SOS / PM / APC
    r"|\x1b[@-Z\\-_]"  # two-byte sequences
    r"|\x9b[0-?]*[ -/]*[@-~]"  # 8-bit CSI
)
_CONTROL = LazyPattern(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff\ufdd0-\ufdef\ufffe\uffff]"
)
# A lone surrogate cannot be encoded (stdout, files, XML): shown as the replacement character.
_SURROGATE = LazyPattern(r"[\ud800-\udfff]")
_NEWLINES = LazyPattern(r"[\r\n\t\u2028\u2029]+")


# Every character any substitution below matches (escape sequences start with ESC or the
# 8-bit CSI, both controls): text without one is returned as it is, or clipped to the limit
# (the substitutions would change nothing in it). Reports render several short, nearly always
# plain strings per check, and coverage reasons longer than the limit.
_UNSAFE = LazyPattern(
    r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff\u2028\u2029"
    r"\ufdd0-\ufdef\ufffe\uffff\ud800-\udfff]"
)
_search = _UNSAFE.search


def safe_text(value: Any, limit: int | None = DEFAULT_LIMIT) -> str:
    """Render any value as one printable line, at most ``limit`` characters (None: no limit)."""
    # Nothing to strip: at most a clip. A printable text holds none of ``_UNSAFE``'s
    # characters (controls, format characters, separators, surrogates and noncharacters are
    # all unprintable), and ``isprintable`` reads a text in half the time the search takes.
    if type(value) is str and (value.isprintable() or _search(value) is None):
        return value if limit is None else clipped(value, limit)
    try:
        text = value if isinstance(value, str) else _stringify(value)
        text = _ESCAPE_SEQUENCE.sub("", text)
        text = _NEWLINES.sub(" ", text)
        text = _CONTROL.sub("", text)
        text = _SURROGATE.sub("\ufffd", text)
        return text if limit is None else clipped(text, limit)
    except Exception:  # rendering must never cost a report
        return "<unrenderable value>"


def clipped(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, the last one "…" where it was cut: what
    ``safe_text(text, limit)`` gives for a text ``safe_text`` already rendered."""
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "…"


# The error handler every report output is opened with: what its encoding cannot hold (in
# UTF-8 only a lone surrogate, which JSON text can carry as "\udfff") is written as U+FFFD,
# or "?" where even that cannot be encoded, instead of failing the report.
OUTPUT_ERRORS = "rampart-otel-replace"


def _replace_unencodable(error: UnicodeError) -> tuple[str | bytes, int]:
    if not isinstance(error, UnicodeEncodeError):
        raise error
    count = error.end - error.start
    if codecs.lookup(error.encoding).name == "utf-8":
        return _UTF8_REPLACEMENT * count, error.end  # the UTF-8 encoder takes bytes, or ASCII
    return "?" * count, error.end


_UTF8_REPLACEMENT = "\ufffd".encode()


codecs.register_error(OUTPUT_ERRORS, _replace_unencodable)


def encodable(text: str) -> str:
    """``text`` with each lone surrogate (which no UTF-8 output can hold) as U+FFFD; every
    other character kept, newlines and controls too (for JSON text and the like)."""
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text


def without_password(url: str) -> str:
    """``url`` as a message names it: a ``user:password@`` in it written ``user:***@``, and
    the value of a query parameter named like a credential (libpq's ``?password=``, an
    endpoint's ``?token=``) written ``***``."""
    return _URL_SECRET_PARAM.sub(r"\1=***", _URL_PASSWORD.sub(r"\1:***@", url))


_URL_PASSWORD = LazyPattern(r"^([a-zA-Z][\w+.-]*://[^:/@]*):[^@/]*@")
_URL_SECRET_PARAM = LazyPattern(
    r"([?&;][^=&;#]*(?:pass|pwd|token|secret|key|auth|sig|credential)[^=&;#]*)=[^&;#]*",
    re.IGNORECASE,
)


def _stringify(value: Any) -> str:
    if isinstance(value, bytes):
        return value.hex() if len(value) <= 64 else value[:64].hex() + "…"
    return str(value)


_SECRETS_SHOWN: ContextVar[bool] = ContextVar("rampart_otel_secrets_shown", default=False)


@contextmanager
def secrets_shown(show: bool = True) -> Iterator[None]:
    """Within this block, ``shown`` and ``shown_text`` leave secret-looking values as they are."""
    token = _SECRETS_SHOWN.set(show)
    try:
        yield
    finally:
        _SECRETS_SHOWN.reset(token)


def shown(text: str) -> str:
    """Trace text as a person-read output shows it: secrets masked unless ``secrets_shown``."""
    if _SECRETS_SHOWN.get():
        return text
    # startup: the secret formats (RE2's union, compiled at import) only for a masked output
    from rampart_otel.secret_values import mask_secrets

    return mask_secrets(text)


def shown_text(value: Any, limit: int | None = DEFAULT_LIMIT, *, words: bool = False) -> str:
    """``safe_text`` with secrets masked (``shown``); masked before it is cut, so a cut can
    never leave part of a secret unmasked. ``words``: cut at a word boundary."""
    text = shown(safe_text(value, None))
    if words:
        return cut_at_word(text, limit)
    return safe_text(text, limit)


def cut_at_word(text: str, limit: int | None) -> str:
    """``text`` (one line) in at most ``limit`` characters, cut after the last whole word
    that fits, with an ellipsis; a single word longer than the limit is cut inside it."""
    if limit is None or len(text) <= limit:
        return text
    head = text[: max(limit - 1, 0)]
    space = head.rfind(" ")
    if space > limit // 2:  # a word boundary not too far back
        head = head[:space]
    return head.rstrip(" ,;:") + "…"
