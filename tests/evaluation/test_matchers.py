"""Matchers: two-valued on present values, unknown (None) on missing ones."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rampart_otel.evaluation.matchers import (
    MISSING,
    Equals,
    all_match,
    as_matcher,
    contains,
    glob,
    not_,
    not_in,
    one_of,
    regex,
)

UNKNOWN_VALUES = [MISSING, None]


@pytest.mark.parametrize(
    ("matcher", "value", "expected"),
    [
        # bare literal: equality, booleans never equal numbers
        (as_matcher("a"), "a", True),
        (as_matcher("a"), "b", False),
        (as_matcher(1), 1.0, True),
        (as_matcher(1), True, False),
        (as_matcher(True), 1, False),
        (as_matcher(True), True, True),
        (as_matcher(["a", "b"]), ["a", "b"], True),
        (as_matcher(["a", "b"]), ["a"], False),
        (as_matcher("a"), ["a"], False),
        # regex: search anywhere; numbers by their text; lists if any item matches
        (regex(r"evil\.com$"), "https://evil.com", True),
        (regex(r"^evil"), "https://evil.com", False),
        (regex(r"^5\d\d$"), 503, True),
        (regex("rm"), ["ls", "rm -rf"], True),
        (regex("rm"), ["ls"], False),
        (regex("x"), {"x": 1}, False),
        # glob: whole text, case-sensitive
        (glob("*@evil.com"), "bob@evil.com", True),
        (glob("*@evil.com"), "bob@EVIL.com", False),
        (glob("*@evil.com"), "bob@evil.com.au", False),
        # contains: substring / list membership / mapping key
        (contains("pass"), "my password", True),
        (contains("Pass"), "my password", False),
        (contains("b"), ["a", "b"], True),
        (contains("c"), ["a", "b"], False),
        (contains(2), [1, 2], True),
        (contains("token"), {"token": "x"}, True),
        (contains("x"), {"token": "x"}, False),
        (contains("1"), 1, False),
        # one_of / not_in
        (one_of(["GET", "HEAD"]), "GET", True),
        (one_of(["GET", "HEAD"]), "POST", False),
        (not_in(["api.example.com"]), "evil.com", True),
        (not_in(["api.example.com"]), "api.example.com", False),
        (not_in([1]), True, True),
        # not_
        (not_(glob("*.internal")), "evil.com", True),
        (not_("GET"), "GET", False),
    ],
)
def test_match_present(matcher, value, expected):
    assert matcher.match(value) is expected


@pytest.mark.parametrize(
    "matcher",
    [
        as_matcher("a"),
        regex("a"),
        glob("*"),
        contains("a"),
        one_of(["a"]),
        not_in(["a"]),
        not_("a"),
        not_(not_in(["a"])),
    ],
    ids=repr,
)
@pytest.mark.parametrize("value", UNKNOWN_VALUES, ids=["missing", "none"])
def test_missing_value_is_unknown(matcher, value):
    """A value the trace did not carry can neither match nor fail to match."""
    assert matcher.match(value) is None


@pytest.mark.parametrize(
    ("matcher", "described", "policy_syntax"),
    [
        (
            not_in(["api.example.com"]),
            "host not in ['api.example.com']",
            "not_in(['api.example.com'])",
        ),
        (one_of(["a", 1]), "host in ['a', 1]", "one_of(['a', 1])"),
        (regex("^x"), "host matches regex '^x'", "regex('^x')"),
        (glob("*.com"), "host matches glob '*.com'", "glob('*.com')"),
        (contains("x"), "host contains 'x'", "contains('x')"),
        (as_matcher("x"), "host == 'x'", "'x'"),
        (as_matcher(["x"]), "host == ['x']", "['x']"),
        (not_(glob("*.com")), "not (host matches glob '*.com')", "not_(glob('*.com'))"),
    ],
)
def test_describe_and_repr(matcher, described, policy_syntax):
    assert matcher.describe("host") == described
    assert repr(matcher) == policy_syntax


def test_matchers_compare_by_value():
    assert regex("a") == regex("a")
    assert not_in(["a"]) == not_in(("a",))
    assert not_("a") == not_(Equals("a"))
    assert glob("a") != regex("a")


@pytest.mark.parametrize(
    ("build", "error"),
    [
        (lambda: regex("("), ValueError),
        (lambda: regex(1), TypeError),
        (lambda: glob(None), TypeError),
        (lambda: one_of("abc"), TypeError),
        (lambda: not_in([["nested"]]), TypeError),
        (lambda: contains(["a"]), TypeError),
        (lambda: as_matcher(None), TypeError),
        (lambda: as_matcher({"a": 1}), TypeError),
    ],
)
def test_invalid_construction(build, error):
    with pytest.raises(error):
        build()


def test_invalid_regex_message_names_pattern():
    with pytest.raises(ValueError, match=r"invalid regular expression '\('"):
        regex("(")


@pytest.mark.parametrize(
    ("details", "expected"),
    [
        ({"host": "evil.com", "method": "POST"}, True),
        ({"host": "evil.com", "method": "GET"}, False),
        ({"method": "GET"}, False),  # one definite False settles a Kleene AND
        ({"method": "POST"}, None),  # host unknown, method matches
        ({}, None),
    ],
)
def test_all_match_is_kleene_and(details, expected):
    matchers = {"host": not_in(["api.example.com"]), "method": as_matcher("POST")}
    assert all_match(matchers, details) is expected


def test_all_match_on_non_mapping_is_unknown():
    assert all_match({"a": as_matcher(1)}, "raw string") is None
    assert all_match({}, {"anything": 1}) is True


def test_a_pattern_that_backtracks_catastrophically_in_re_matches_in_linear_time() -> None:
    # Python's re needs ~30 s for 28 characters and doubles per character; RE2 is linear.
    # Run in a child with a deadline, so a regression fails instead of hanging the suite.
    code = (
        "from rampart_otel.evaluation.matchers import regex\n"
        "m = regex('(a+)+$')\n"
        "assert m.match('a' * 60 + '!') is False\n"
        "assert m.match('x' * 1_000_000 + 'a') is True\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_lookaround_and_backreferences_are_refused_with_the_reason() -> None:
    for pattern in ("(?<=a)b", r"(a)\1"):
        with pytest.raises(ValueError, match="RE2 syntax: no backreferences or lookaround"):
            regex(pattern)


def test_a_lone_surrogate_in_the_text_is_matched_not_raised() -> None:
    assert regex("b$").match("a\ud800b") is True
    assert regex("^a.b$").match("a\ud800b") is True
    assert regex("z").match("a\ud800b") is False


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from([r"b+$", r"^é", r"\x{FFFD}", r"(?i)A.b", r"^$", r"\bab\b", r"[^a]"]),
    st.text(alphabet=st.sampled_from("ab é\n\ud800\U0001f600")),
)
def test_a_regex_matches_where_its_search_finds_a_match(pattern: str, text: str) -> None:
    """The yes/no search on the text's bytes (a lone surrogate as U+FFFD) and the search
    that returns the match agree, on every character width."""
    matcher = regex(pattern)
    assert matcher.match(text) is (matcher.search(text) is not None)
