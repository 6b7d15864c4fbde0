"""Matching a text against a literal (case-insensitive) or a matcher, and quoting the match.

One way for every evaluator that reads free text: the response, the user's input, a tool's
result.
"""

from __future__ import annotations

from rampart_otel.evaluation.evaluators.settle import EVIDENCE_LIMIT
from rampart_otel.evaluation.matchers import Contains, Matcher, Regex, Secret
from rampart_otel.render import safe_text


def find_text(
    text: str, literal: str | None, matcher: Matcher | None
) -> tuple[bool | None, int, int]:
    """Whether ``text`` matches, and the span of the match to quote (or 0, 0).

    A literal is a case-insensitive substring; a matcher is applied to the whole text.
    """
    if matcher is None:
        assert literal is not None
        index = text.casefold().find(literal.casefold())
        if index < 0:
            return False, 0, 0
        return True, index, index + len(literal)
    answer = matcher.match(text)
    if answer is True and isinstance(matcher, Regex):
        found = matcher.search(text)
        if found:
            return True, found.start(), found.end()
    if answer is True and isinstance(matcher, Secret):
        found = matcher.findings(text)
        if found:
            return True, found[0].start, found[0].end
    if answer is True and isinstance(matcher, Contains):
        index = text.find(str(matcher.item))
        if index >= 0:
            return True, index, index + len(str(matcher.item))
    return answer, 0, 0


def excerpt_of(text: str, start: int, end: int, context: int = 40) -> str:
    """The match with some context either side, as one safe line."""
    if end <= start:
        return safe_text(text, EVIDENCE_LIMIT - 40)
    left = max(start - context, 0)
    right = min(end + context, len(text))
    body = text[left:right]
    rendered = safe_text(body, EVIDENCE_LIMIT - 40)
    return f"{'…' if left else ''}{rendered}{'…' if right < len(text) else ''}"
