"""``render``: the masking switch and the word-boundary cut every person-read output uses."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rampart_otel.render import clipped, cut_at_word, safe_text, secrets_shown, shown, shown_text


def test_shown_masks_unless_secrets_are_shown() -> None:
    text = "customer=ACME-4471; api_token=tok_live_9f3a"
    assert shown(text) == "customer=ACME-4471; api_token=tok_…[masked:assignment]"
    with secrets_shown():
        assert shown(text) == text
        with secrets_shown(False):
            assert shown(text) != text
    assert shown(text) != text


def test_a_cut_never_leaves_part_of_a_secret() -> None:
    text = "data: api_token=tok_live_9f3a and more"
    assert "tok_li" not in shown_text(text, 26)  # cut inside the value: masked first


def test_cut_at_word() -> None:
    text = "the quick brown fox jumps over the lazy dog"
    assert cut_at_word(text, 100) == text
    assert cut_at_word(text, 20) == "the quick brown…"
    assert cut_at_word("a" * 50, 10) == "a" * 9 + "…"  # one long word: cut inside it
    assert cut_at_word("one two, three", 10) == "one two…"


def _rendered_in_full(text: str, limit: int | None) -> str:
    """``safe_text`` as every substitution then the clip: the reference its shortcut keeps."""
    from rampart_otel import render

    text = render._ESCAPE_SEQUENCE.sub("", text)
    text = render._NEWLINES.sub(" ", text)
    text = render._CONTROL.sub("", text)
    text = render._SURROGATE.sub("\ufffd", text)
    if limit is not None and len(text) > limit:
        text = text[: max(limit - 1, 0)] + "…"
    return text


@settings(max_examples=400, deadline=None)
@given(
    st.text(alphabet=st.sampled_from("ab é\x1b[m\n\t\u202e\ud800\x9b\x07…")),
    st.one_of(st.none(), st.integers(0, 30)),
)
def test_safe_text_shortcut_renders_as_every_substitution_would(
    text: str, limit: int | None
) -> None:
    assert safe_text(text, limit) == _rendered_in_full(text, limit)


def test_a_plain_text_over_the_limit_is_clipped() -> None:
    assert safe_text("x" * 500, 400) == "x" * 399 + "…"
    assert safe_text("plain", 0) == "…"


def test_every_character_safe_text_strips_is_unprintable() -> None:
    """The shortcut for printable text skips no character the substitutions would change."""
    from rampart_otel import render

    unsafe = [chr(c) for c in range(0x110000) if render._UNSAFE.match(chr(c))]
    assert len(unsafe) > 2000  # the surrogates and the controls at least
    assert not [c for c in unsafe if c.isprintable()]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab é\x1b[m\n\t\u202e\ud800\x9b…")), st.integers(0, 30))
def test_clipping_rendered_text_is_rendering_it_with_the_limit(text: str, limit: int) -> None:
    assert clipped(safe_text(text, None), limit) == safe_text(text, limit)
