"""``render``: the masking switch and the word-boundary cut every person-read output uses."""

from __future__ import annotations

from rampart_otel.render import cut_at_word, secrets_shown, shown, shown_text


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
