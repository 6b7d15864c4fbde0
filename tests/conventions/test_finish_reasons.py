"""finish_reasons.combine: each reason's answer remembered (bounded), as classify gives it."""

from __future__ import annotations

import itertools

import pytest

from rampart_otel.conventions import finish_reasons
from rampart_otel.conventions.finish_reasons import ToolRequest, classify, combine

REASONS = ["stop", "STOP ", "tool_calls", "FinishReason.STOP", "length", "interrupted", "end_turn"]
PROVIDERS = [None, "openai", "anthropic"]
SOURCES = [None, "openai-agents", finish_reasons.SCOPE_NOT_KEPT + "phoenix"]


def _combined(reasons: list[str], provider: str | None, source: str | None) -> ToolRequest:
    """``combine`` worked out without the memo."""
    found = [classify(reason, provider, source) for reason in reasons]
    if not found:
        return ToolRequest.UNKNOWN
    if ToolRequest.TOOLS in found:
        return ToolRequest.TOOLS
    if all(item is ToolRequest.NO_TOOLS for item in found):
        return ToolRequest.NO_TOOLS
    return ToolRequest.UNKNOWN


def test_remembered_answers_are_classify_answers() -> None:
    finish_reasons._classified.cache_clear()
    for _ in range(2):  # worked out, then remembered
        for provider, source in itertools.product(PROVIDERS, SOURCES):
            for size in (0, 1, 2):
                for reasons in itertools.combinations(REASONS, size):
                    got = combine(list(reasons), provider, source)
                    assert got is _combined(list(reasons), provider, source)


def test_a_reason_that_is_not_text_is_not_remembered() -> None:
    """What is not a plain string goes to classify itself, as before (its error, if any)."""
    odd = ["not", "hashable"]
    before = finish_reasons._classified.cache_info().currsize
    assert combine(["tool_calls"], odd) is ToolRequest.TOOLS  # type: ignore[arg-type]
    assert finish_reasons._classified.cache_info().currsize == before
    with pytest.raises(AttributeError):  # as classify itself: the provider read as text
        combine(["stop"], odd)  # type: ignore[arg-type]


def test_the_memo_is_bounded() -> None:
    for n in range(3000):
        combine([f"reason {n}"], "openai")
    info = finish_reasons._classified.cache_info()
    assert info.maxsize is not None and info.currsize <= info.maxsize == 1024
