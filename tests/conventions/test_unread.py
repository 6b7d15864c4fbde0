"""conventions.unread: content no convention reads, found by key (the per-key memo)."""

from __future__ import annotations

from span_factory import mk

from rampart_otel.conventions import unread
from rampart_otel.conventions.unread import KnownContent, content_hint

KEYS = (
    "gen_ai.prompt",  # read under a prefix
    "llm.input_messages",  # read exactly
    "ai.toolCall.args",  # content no convention reads
    "app.result",  # content no convention reads
    "app.token_usage",  # metadata, not content
    "http.method",  # not content
)


def _worked_out(known: KnownContent, key: str) -> bool:
    """What ``KnownContent.unread_key`` answers, worked out without any memo."""
    known_key = key in known.exact or key.startswith(known.prefixes)
    named = unread._CONTENT_SEGMENT.search(key) is not None and unread._METADATA.search(key) is None
    return not known_key and named


def test_the_memo_answers_as_working_it_out() -> None:
    known = KnownContent(["llm.input_messages", "gen_ai."], [])
    for _ in range(2):  # worked out, then remembered: the same answers
        assert [known.unread_key(key) for key in KEYS] == [_worked_out(known, key) for key in KEYS]
    assert [key for key in KEYS if known.unread_key(key)] == ["ai.toolCall.args", "app.result"]


def test_the_hint_names_the_first_unread_content_with_a_value() -> None:
    known = KnownContent(["llm.input_messages", "gen_ai."], [])
    span = mk(
        "s1",
        "step",
        {
            "gen_ai.prompt": "read by a convention",
            "app.result": "",  # no content: empty
            "app.token_usage": "12",
            "ai.toolCall.args": '{"city": "Paris"}',
        },
    )
    assert content_hint(span, known) == "attribute 'ai.toolCall.args'"
    assert content_hint(mk("s2", "step", {"app.result": "[REDACTED]"}), known) is None


def test_the_memo_is_bounded() -> None:
    """Keys are trace data: the memo holds at most its bound, whatever a trace sends."""
    known = KnownContent([], [])
    for n in range(unread._CONTENT_KEYS_CACHED * 2 + 5):
        assert known.unread_key(f"app.{n}.output") is True
        assert len(known._unread) <= unread._CONTENT_KEYS_CACHED
