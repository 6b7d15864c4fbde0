"""conventions.indexed: flattened ``prefix{i}.rest`` keys grouped by ``i``."""

from __future__ import annotations

from span_factory import span

from rampart_otel.conventions import indexed, openinference

PREFIX = "llm.input_messages."


def test_groups_by_index_in_key_order() -> None:
    attrs = {
        f"{PREFIX}1.message.role": "user",
        f"{PREFIX}0.message.role": "system",
        f"{PREFIX}0.message.content": "be brief",
        f"{PREFIX}x.message.role": "not an index",
        f"{PREFIX}2": "no rest",
        "other.key": 1,
    }
    assert indexed(attrs, PREFIX) == {
        1: {"message.role": "user"},
        0: {"message.role": "system", "message.content": "be brief"},
    }
    assert indexed(attrs, PREFIX) == indexed(dict(attrs), PREFIX)  # read again: the same


def test_an_index_int_cannot_read_is_no_index() -> None:
    """Trace keys are the sender's: a digit int() refuses (superscript two), or too many
    digits for int(), is skipped like any key that is not an index, never an error."""
    attrs = {
        f"{PREFIX}\u00b2.message.role": "user",
        f"{PREFIX}{'9' * 5000}.message.role": "user",
        f"{PREFIX}\u0663.message.role": "user",  # ARABIC-INDIC DIGIT THREE: int() reads 3
        f"{PREFIX}0.message.role": "user",
    }
    assert indexed(attrs, PREFIX) == {3: {"message.role": "user"}, 0: {"message.role": "user"}}


def test_a_model_span_with_such_keys_is_read() -> None:
    llm = span(
        "ChatCompletion",
        {
            "openinference.span.kind": "LLM",
            f"{PREFIX}\u00b2.message.role": "user",
            "llm.output_messages.\u00b2.message.role": "assistant",
        },
    )
    report = openinference.read(llm)  # a crash here was an internal error for the whole file
    assert report is not None and report.model
    assert openinference.input_history(llm)[:2] == ({}, {})
    assert openinference.user_input(llm) is None  # no message 0: no input messages recorded
