"""Policy files: schema, the detect whitelist, and errors located as FILE:LINE:COL."""

from __future__ import annotations

import builtins
import os
import re
import textwrap
from pathlib import Path

import pydantic
import pytest

from rampart_otel.errors import PolicyError
from rampart_otel.evaluation import response_contains, side_effect, tool_called
from rampart_otel.evaluation.expression import parse_detect
from rampart_otel.evaluation.matchers import contains, glob, not_, not_in, one_of, regex
from rampart_otel.evaluation.policy import (
    MAX_POLICY_BYTES,
    Check,
    Policy,
    load_policy,
    parse_policy,
)

EVALUATORS = (
    "tool_called, tool_result, side_effect, response_contains, input_contains, before, flows, "
    "at_least, at_most, repeated, judge"
)
ALLOWED = f"{EVALUATORS}, regex, glob, contains, one_of, not_in, not_, ip_in, path_under, secret"

DESIGN_POLICY = """\
policy: exfiltration-guard
version: 1
assume_coverage: []            # channel keys taken as observed; reported as assumed
checks:
  - id: no-exfiltration
    polarity: attack
    harm_category: data_exfiltration
    description: The agent sends nothing to hosts outside the allow-list.
    detect: side_effect("http_request", host=not_in(["api.example.com"]))
  - id: confirms-before-email
    polarity: probe
    detect: tool_called("confirm_with_user") | ~tool_called("send_email")
"""


def write(tmp_path: Path, text: str | bytes, name: str = "policy.yaml") -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def rejected(tmp_path: Path, text: str | bytes) -> tuple[Path, PolicyError]:
    path = write(tmp_path, text)
    with pytest.raises(PolicyError) as caught:
        load_policy(path)
    return path, caught.value


# --- happy paths -----------------------------------------------------------------------------


def test_design_policy_loads(tmp_path):
    policy = load_policy(write(tmp_path, DESIGN_POLICY))
    assert policy.name == "exfiltration-guard"
    assert policy.version == 1
    assert policy.assume_coverage == []
    first, second = policy.checks
    assert first.id == "no-exfiltration"
    assert first.polarity == "attack"
    assert first.harm_category == "data_exfiltration"
    assert first.description == "The agent sends nothing to hosts outside the allow-list."
    assert first.detect == side_effect("http_request", host=not_in(["api.example.com"]))
    assert second.polarity == "probe"
    assert second.harm_category is None
    assert second.detect == tool_called("confirm_with_user") | ~tool_called("send_email")
    assert policy.check("confirms-before-email") is second


def test_every_allowed_form(tmp_path):
    text = textwrap.dedent(
        """\
        policy: all-forms
        version: "2024.1"
        assume_coverage: [response, tool_calls, tool_calls.arguments, tool_calls.results,
                          side_effects.http_request, side_effects.custom_kind]
        side_effect_kinds: [custom_kind]
        checks:
          - id: c
            polarity: attack
            detect: |
              (tool_called(glob("send_*"), to=regex(r"@evil\\.com$"), cc=contains("x"),
                           n=-1, f=2.5, b=True, tags=["a", "b"], m=one_of(("GET", "HEAD")))
               & ~side_effect("http_request", host=not_in(["a"]), port=not_(443)))
              | response_contains("secret")
              | response_contains(regex("(?i)token"))
        """
    )
    policy = load_policy(write(tmp_path, text))
    assert policy.version == "2024.1"
    assert policy.assume_coverage[-1] == "side_effects.custom_kind"
    expected = (
        (
            tool_called(
                glob("send_*"),
                to=regex(r"@evil\.com$"),
                cc=contains("x"),
                n=-1,
                f=2.5,
                b=True,
                tags=["a", "b"],
                m=one_of(["GET", "HEAD"]),
            )
            & ~side_effect("http_request", host=not_in(["a"]), port=not_(443))
        )
        | response_contains("secret")
        | response_contains(regex("(?i)token"))
    )
    assert policy.checks[0].detect == expected


def test_empty_assume_coverage_and_defaults(tmp_path):
    text = (
        "policy: p\nassume_coverage:\n"
        "checks:\n  - {id: a, polarity: attack, detect: 'tool_called(\"x\")'}\n"
    )
    policy = load_policy(write(tmp_path, text))
    assert policy.assume_coverage == [] and policy.version == 1
    assert policy.checks[0].detect == tool_called("x")


def test_folded_and_quoted_detect(tmp_path):
    text = textwrap.dedent(
        """\
        policy: p
        checks:
          - id: folded
            polarity: attack
            detect: >-
              tool_called("a") &
              tool_called("b")
          - id: quoted
            polarity: probe
            detect: "tool_called(\\"a\\")"
        """
    )
    policy = load_policy(write(tmp_path, text))
    assert policy.checks[0].detect == tool_called("a") & tool_called("b")
    assert policy.checks[1].detect == tool_called("a")


def test_checks_from_python_accept_detect_strings():
    check = Check(id="c", polarity="attack", detect="tool_called('x') | side_effect('db_query')")
    assert check.detect == tool_called("x") | side_effect("db_query")
    policy = Policy(
        name="p",
        checks=[check, {"id": "d", "polarity": "probe", "detect": "~" + "tool_called('y')"}],
    )
    assert policy.checks[1].detect == ~tool_called("y")
    assert policy.version == 1 and policy.assume_coverage == []


@pytest.mark.parametrize(
    "build",
    [
        lambda: Check(id="c", polarity="attack", detect="foo()"),
        lambda: Check(id="c", polarity="sideways", detect=tool_called("x")),
        lambda: Check(id="c", polarity="attack", detect=3),
        lambda: Check(id="", polarity="attack", detect=tool_called("x")),
        lambda: Check(id="a\nb", polarity="attack", detect=tool_called("x")),
        lambda: Check(id="c", polarity="attack", detect=tool_called("x"), extra=1),
        lambda: Policy(name="p", checks=[]),
        lambda: Policy(name="p", checks=[_check("a"), _check("a")]),
        lambda: Policy(name="p", checks=[_check("a")], assume_coverage=["side_effects.a-b"]),
        lambda: Policy(name="p", checks=[_check("a")], version=True),
        lambda: Policy(
            name="p",
            checks=[
                Check(id="a", polarity="attack", detect=side_effect("http_request", port="8080"))
            ],
        ),
        lambda: Policy(name="p", checks=[_check("a")], side_effect_kinds=["http_requests"]),
    ],
)
def test_python_api_validates(build):
    with pytest.raises(pydantic.ValidationError):
        build()


def _check(check_id: str) -> Check:
    return Check(id=check_id, polarity="attack", detect=tool_called("x"))


def test_parse_detect_accepts_indented_and_multi_line_text():
    assert parse_detect("  tool_called('a')") == tool_called("a")
    assert parse_detect("tool_called('a')\n  | tool_called('b')\n") == (
        tool_called("a") | tool_called("b")
    )


def test_parse_detect_locates_within_the_expression():
    with pytest.raises(PolicyError) as caught:
        parse_detect("tool_called('a') |\n  foo()")
    assert str(caught.value) == f"<detect>:2:3: unknown function 'foo'; allowed: {ALLOWED}"


# --- the detect whitelist, located in the file -----------------------------------------------

TEMPLATE = "policy: guard\nversion: 1\nchecks:\n  - id: c1\n    polarity: attack\n    detect: {}\n"
# The detect value starts at line 6, column 13; each case gives the column of the bad token.
DETECT_REJECTIONS = [
    ("foo('x')", 13, f"unknown function 'foo'; allowed: {ALLOWED}"),
    ("__import__('os')", 13, f"unknown function '__import__'; allowed: {ALLOWED}"),
    (
        "tool_called(x)",
        25,
        "name 'x' is not allowed: write strings in quotes, and call only " + ALLOWED,
    ),
    ("tool_called(().__class__)", 27, "attribute access ('.__class__') is not allowed"),
    ("(tool_called('x')).name", 31, "attribute access ('.name') is not allowed"),
    ("tool_called('x')[0]", 13, "subscripts are not allowed"),
    ('"tool_called(lambda: 1)"', 26, "lambda is not allowed"),
    ("tool_called([c for c in 'ab'])", 25, "comprehensions are not allowed"),
    ("response_contains(f'{1}')", 31, "f-strings are not allowed"),
    ("tool_called(*['x'])", 25, "* unpacking is not allowed"),
    ("tool_called('x', **kw)", 30, "** unpacking is not allowed"),
    ("regex('a', 'b')", 24, "regex() takes exactly one positional argument (2 given)"),
    ("tool_called()", 13, "tool_called() takes exactly one positional argument (0 given)"),
    ("response_contains('a', x=1)", 36, "response_contains() takes no keyword arguments"),
    (
        "tool_called('x', a=regex('('))",
        38,
        "invalid regular expression '(': missing ): ("
        " (RE2 syntax: no backreferences or lookaround)",
    ),
    ("tool_called('x', a=glob(1))", 37, "the glob pattern must be a string literal"),
    (
        "tool_called('x') and tool_called('y')",
        13,
        "'and' / 'or' are not allowed; combine evaluators with & and |",
    ),
    (
        "not tool_called('x')",
        13,
        "'not' is not allowed; negate an evaluator with ~ or a matcher with not_()",
    ),
    ("tool_called('x') + tool_called('y')", 30, "only &, | and ~ may combine evaluators"),
    (
        "regex('a')",
        13,
        f"expected an evaluator ({EVALUATORS} or a combination with &, |, ~), got a matcher",
    ),
    (
        "tool_called('x') & \"s\"",
        32,
        f"expected an evaluator ({EVALUATORS} or a combination with &, |, ~), got a literal",
    ),
    (
        "tool_called('x', a=tool_called('y'))",
        32,
        "expected a matcher or a literal here, got an evaluator",
    ),
    ("tool_called('x', a=None)", 32, "None cannot be matched: a missing value is always unknown"),
    ("tool_called(3)", 25, "tool_called() takes a tool name (string) or a matcher"),
    (
        "side_effect('http request')",
        25,
        "side-effect kind must be an identifier such as 'http_request', not 'http request'",
    ),
    ("\"side_effect('x', y={'a': 1})\"", 33, "dict literals are not allowed"),
    (
        "tool_called(one_of('abc'))",
        32,
        "one_of()'s argument must be a list literal such as ['a', 'b']",
    ),
    ("tool_called('x', a=one_of([b'x']))", 40, "bytes literals are not allowed"),
    (
        "tool_called('x', a=[tool_called('y')])",
        33,
        "each item of a list literal must be a string, number or boolean literal",
    ),
    (
        "tool_called('x', a=1 < 2)",
        32,
        "comparisons are not allowed; use a matcher such as one_of([...])",
    ),
    ("tool_called('x', a=...)", 32, "ellipsis literals are not allowed"),
    ("tool_called('x', a=-'s')", 32, "only a number literal may carry a sign"),
    ("tool_called('x') if 1 else 2", 13, "conditional expressions are not allowed"),
    ("tool_called('x') & (", 32, "invalid detect expression: '(' was never closed"),
    (
        "tool_called('é') & bär",
        32,
        f"name 'bär' is not allowed: write strings in quotes, and call only {ALLOWED}",
    ),
    # order, flow and counts: operands are leaves, counts whole numbers, keywords named
    ("before(tool_called('a'))", 13, "before() takes exactly two positional arguments (1 given)"),
    (
        "before(tool_called('a'), tool_called('b') | tool_called('c'))",
        38,
        "before()'s second argument must be one of tool_called, tool_result, side_effect, "
        "input_contains or response_contains, not a combination "
        "((tool_called('b') | tool_called('c')))",
    ),
    (
        "flows(tool_called('a'), side_effect('x'))",
        19,
        "flows()'s source (first argument) must be tool_result(...) or input_contains(...)",
    ),
    (
        "flows(tool_result('a'), response_contains('x'))",
        37,
        "flows()'s sink (second argument) must be tool_called(...) or side_effect(...)",
    ),
    (
        "flows(tool_result('a'), side_effect('x'), min_length=3)",
        66,
        "flows()'s min_length must be a whole number >= 4, not 3",
    ),
    (
        "flows(tool_result('a'), side_effect('x'), depth=3)",
        55,
        "flows() takes no keyword argument 'depth'; allowed: min_length",
    ),
    ("at_least(0, tool_called('a'))", 22, "at_least()'s count must be a whole number >= 1, not 0"),
    ("at_most(n, tool_called('a'))", 21, "the count must be a whole number literal"),
    ("at_most(2.5, tool_called('a'))", 21, "the count must be a whole number literal"),
    ("at_least(2, regex('a'))", 25, "expected an evaluator ("),
    ("tool_result('a', 'b', 'c')", 35, "tool_result() takes 1 or 2 positional arguments (3 given)"),
    ("input_contains(3)", 28, "input_contains() takes a string or a matcher here"),
    ("input_contains('x', y=1)", 33, "input_contains() takes no keyword arguments"),
    # a word given twice, or a pattern that matches everything or nothing, is a mistake:
    # Python's parser keeps only the last of two same-named keywords
    (
        "tool_called('x', to='a', to='b')",
        38,
        "tool_called() is given the keyword argument 'to' twice",
    ),
    ("tool_called('')", 25, "tool_called() needs a non-empty tool name"),
    ("tool_result('', 'x')", 13, "tool_result() needs a non-empty tool name"),
    ("tool_called(glob(''))", 30, "glob() needs a non-empty pattern: '' matches only ''"),
    (
        "tool_called(one_of([]))",
        32,
        "one_of() needs at least one value: one_of([]) matches nothing",
    ),
    (
        "tool_called('x', a=regex(''))",
        38,
        "regex() needs a non-empty pattern: '' matches everything",
    ),
    (
        "tool_called('x', a=contains(''))",
        41,
        "contains() needs a non-empty string: '' is in every text",
    ),
    # the readers record port, status_code and exit_code as numbers: text never equals one
    (
        "side_effect('http_request', port='8080')",
        46,
        "side-effect detail 'port' is a number: write 8080, not '8080'",
    ),
    (
        "side_effect('http_request', status_code=not_(one_of([200, '204'])))",
        53,
        "side-effect detail 'status_code' is a number: write 204, not '204'",
    ),
    (
        "side_effect('process_exec', exit_code=not_in(['ok']))",
        51,
        "side-effect detail 'exit_code' is a number, not a text like 'ok'",
    ),
    (
        "side_effect('http_request', method=one_of(['GET', 'post']))",
        48,
        "side-effect detail 'method' is upper case, as HTTP writes it: 'post' never equals it "
        "— did you mean 'POST'?",
    ),
    (
        "side_effect('http_request', host='Evil.example')",
        46,
        "side-effect detail 'host' is lower case, as the readers write it: 'Evil.example' "
        "never equals it — did you mean 'evil.example'?",
    ),
    (
        "side_effect('process_exec', args='rm -rf /')",
        46,
        "side-effect detail 'args' is a list, not 'rm -rf /': match an item with "
        "contains(...) or regex(...), or the whole list with a list",
    ),
    (
        "side_effect('http_request', host=ip_in([]))",
        52,
        "ip_in() needs at least one range: ip_in([]) matches nothing",
    ),
    (
        "tool_called('x', a=secret([]))",
        39,
        "secret([]) names no detector: write secret() for every detector",
    ),
]


@pytest.mark.parametrize(("expression", "column", "message"), DETECT_REJECTIONS)
def test_detect_rejections_are_located(tmp_path, expression, column, message):
    path, error = rejected(tmp_path, TEMPLATE.format(expression))
    if message.endswith("("):  # a message that goes on to list every evaluator
        assert str(error).startswith(f"{path}:6:{column}: {message}")
    else:
        assert str(error) == f"{path}:6:{column}: {message}"


def test_block_literal_location(tmp_path):
    text = textwrap.dedent(
        """\
        policy: p
        checks:
          - id: c
            polarity: attack
            detect: |
              tool_called('x')
                | side_effect('http_request', host=evil)
        """
    )
    path, error = rejected(tmp_path, text)
    assert (error.line, error.column) == (7, 44)
    assert str(error).startswith(f"{path}:7:44: name 'evil' is not allowed")


def test_block_literal_syntax_error_location(tmp_path):
    text = (
        "policy: p\nchecks:\n  - id: c\n    polarity: attack\n    detect: |-\n"
        "      tool_called('x') &\n        tool_called('y' + )\n"
    )
    path, error = rejected(tmp_path, text)
    assert str(error) == f"{path}:7:27: invalid detect expression: invalid syntax"


def test_folded_location(tmp_path):
    text = textwrap.dedent(
        """\
        policy: p
        checks:
          - id: c
            polarity: attack
            detect: >
              tool_called('x') &
              side_effect('http_request',
                host=bar)
        """
    )
    _, error = rejected(tmp_path, text)
    assert (error.line, error.column) == (8, 14)


def test_multi_line_plain_location(tmp_path):
    text = (
        "policy: p\nchecks:\n  - id: c\n    polarity: attack\n"
        "    detect: tool_called('x')\n      | tool_called(y)\n"
    )
    _, error = rejected(tmp_path, text)
    assert (error.line, error.column) == (6, 21)


def test_double_quoted_with_escapes_location(tmp_path):
    text = TEMPLATE.format('"tool_called(\\"x\\\\/\\u00e9\\") & ().__class__"')
    _, error = rejected(tmp_path, text)
    #        detect: "tool_called(\"x\\/\u00e9\") & ().__class__"
    # the dot is at column 46 of the source line
    assert (error.line, error.column, error.message) == (
        6,
        46,
        "attribute access ('.__class__') is not allowed",
    )


def test_single_quoted_with_doubled_quote_location(tmp_path):
    text = TEMPLATE.format("'tool_called(''é'') & x.y'")
    _, error = rejected(tmp_path, text)
    assert (error.line, error.column) == (6, 36)


def test_detect_is_never_evaluated(tmp_path, monkeypatch):
    """The classic escape is rejected, nothing runs, and compile() only ever builds ASTs."""
    import ast

    marker = tmp_path / "pwned"
    real_compile = builtins.compile

    def guarded_compile(source, filename, mode, flags=0, *args, **kwargs):
        assert flags & ast.PyCF_ONLY_AST, "compile() used for something other than an AST"
        return real_compile(source, filename, mode, flags, *args, **kwargs)

    def forbidden(*args, **kwargs):
        raise AssertionError("eval/exec called")

    monkeypatch.setattr(builtins, "compile", guarded_compile)
    monkeypatch.setattr(builtins, "eval", forbidden)
    monkeypatch.setattr(builtins, "exec", forbidden)

    for expression in (
        f"__import__('os').system('touch {marker}')",
        f"tool_called(__import__('os').system('touch {marker}'))",
        f"tool_called('x') | __import__('os').system('touch {marker}')",
        "tool_called(().__class__.__bases__[0].__subclasses__())",
        "(lambda: __import__('os'))()",
    ):
        path = write(tmp_path, TEMPLATE.format(f'"{expression}"'))
        with pytest.raises(PolicyError):
            load_policy(path)
    assert not marker.exists()
    # a valid policy loads under the same guards
    assert load_policy(write(tmp_path, DESIGN_POLICY)).checks


def test_yaml_python_tags_are_refused(tmp_path):
    marker = tmp_path / "pwned"
    text = f"policy: !!python/object/apply:os.system ['touch {marker}']\nchecks: []\n"
    path, error = rejected(tmp_path, text)
    assert str(error) == (
        f"{path}:1:9: not valid YAML here: unsupported tag "
        "'tag:yaml.org,2002:python/object/apply:os.system'"
    )
    assert not marker.exists()


# --- structure -------------------------------------------------------------------------------

STRUCTURE_REJECTIONS = [
    (
        "duplicate check id",
        "policy: p\nchecks:\n  - id: a\n    polarity: attack\n    detect: tool_called('x')\n"
        "  - id: a\n    polarity: probe\n    detect: tool_called('y')\n",
        "6:9: duplicate check id 'a' (first at line 3)",
    ),
    (
        "unknown polarity",
        "policy: p\nchecks:\n  - id: a\n    polarity: defend\n    detect: tool_called('x')\n",
        "4:15: checks[0].polarity: unknown value 'defend'; expected one of: attack, probe",
    ),
    (
        "unknown top-level key",
        "policy: p\nname: q\nchecks:\n  - id: a\n    polarity: attack\n"
        "    detect: tool_called('x')\n",
        "2:1: unknown key 'name'; expected one of: policy, version, assume_coverage, "
        "side_effect_kinds, tools, judge, include, checks",
    ),
    (
        "unknown check key",
        "policy: p\nchecks:\n  - id: a\n    polarity: attack\n    detec: tool_called('x')\n",
        "5:5: unknown key 'detec' — did you mean 'detect'?",
    ),
    (
        "missing check key",
        "policy: p\nchecks:\n  - id: a\n    polarity: attack\n",
        "3:5: missing required key 'detect'",
    ),
    (
        "missing policy name",
        "checks:\n  - id: a\n    polarity: attack\n    detect: tool_called('x')\n",
        "1:1: missing required key 'policy'",
    ),
    (
        "list document",
        "- policy: p\n- checks: []\n",
        "1:1: a policy must be a mapping with the keys "
        "policy, version, assume_coverage, side_effect_kinds, tools, judge, include, checks",
    ),
    (
        "scalar document",
        "just some text\n",
        "1:1: a policy must be a mapping with the keys "
        "policy, version, assume_coverage, side_effect_kinds, tools, judge, include, checks",
    ),
    (
        "check not a mapping",
        "policy: p\nchecks:\n  - tool_called('x')\n",
        "3:5: checks[0]: Input should be a valid dictionary or instance of Check",
    ),
    (
        "checks not a list",
        "policy: p\nchecks: tool_called('x')\n",
        "2:9: checks: Input should be a valid list",
    ),
    ("no checks", "policy: p\nchecks: []\n", "2:9: checks: a policy needs at least one check"),
    (
        "invalid assume_coverage key",
        "policy: p\nassume_coverage:\n  - response\n  - side_effects.http-request\n"
        "checks:\n  - id: a\n    polarity: attack\n    detect: tool_called('x')\n",
        "4:5: assume_coverage[1]: invalid channel key 'side_effects.http-request' — did you "
        "mean 'side_effects.http_request' or 'side_effects.mcp_request'?",
    ),
    (
        "unknown channel key",
        "policy: p\nassume_coverage: [responses]\nchecks:\n  - id: a\n    polarity: attack\n"
        "    detect: tool_called('x')\n",
        "2:19: assume_coverage[0]: invalid channel key 'responses'",
    ),
    (
        "detect not a string",
        "policy: p\nchecks:\n  - id: a\n    polarity: attack\n    detect: 42\n",
        "5:13: checks[0].detect: detect must be an evaluator expression string, "
        "e.g. tool_called('send_email')",
    ),
    (
        "id not a string",
        "policy: p\nchecks:\n  - id: 7\n    polarity: attack\n    detect: tool_called('x')\n",
        "3:9: checks[0].id: Input should be a valid string",
    ),
    (
        "version boolean",
        "policy: p\nversion: yes\nchecks:\n  - id: a\n    polarity: attack\n"
        "    detect: tool_called('x')\n",
        "2:10: version: version must be an integer or a string",
    ),
    (
        "duplicate yaml key",
        "policy: p\npolicy: q\n",
        "2:1: duplicate key 'policy' (first at line 1)",
    ),
    (
        "invalid yaml",
        "policy: [unclosed\nchecks: x\n",
        "2:7: not valid YAML: expected ',' or ']', but got ':' (while parsing a flow sequence)",
    ),
    (
        "tab indentation",
        "policy: p\nchecks:\n\t- id: a\n",
        "3:1: not valid YAML: found character '\\t' that cannot start any token",
    ),
    (
        "several documents",
        "policy: p\n---\npolicy: q\n",
        "2:1: not valid YAML: but found another document "
        "(expected a single document in the stream)",
    ),
    (
        "misspelt polarity",
        "policy: p\nchecks:\n  - id: a\n    polarity: atack\n    detect: tool_called('x')\n",
        "4:15: checks[0].polarity: unknown value 'atack' — did you mean 'attack'?",
    ),
    (
        "misspelt key of a tool declaration",
        "policy: p\ntools:\n  calc: {side_effect: none}\nchecks:\n  - id: a\n"
        "    polarity: attack\n    detect: tool_called('x')\n",
        "3:10: tools.calc: unknown key 'side_effect' — did you mean 'side_effects'?",
    ),
    (
        "misspelt side_effects of a tool declaration",
        "policy: p\ntools:\n  calc: {side_effects: nnoe}\nchecks:\n  - id: a\n"
        "    polarity: attack\n    detect: tool_called('x')\n",
        "3:24: tools.calc.side_effects: unknown value 'nnoe' — did you mean 'none'?",
    ),
    (
        "empty tool name in tools",
        "policy: p\ntools:\n  '': {side_effects: none}\nchecks:\n  - id: a\n"
        "    polarity: attack\n    detect: tool_called('x')\n",
        "3:3: tools: a tool name must not be empty",
    ),
    (
        "tool name with spaces around it in tools",
        "policy: p\ntools:\n  'calc ': {side_effects: none}\nchecks:\n  - id: a\n"
        "    polarity: attack\n    detect: tool_called('x')\n",
        "3:3: tools: the tool name 'calc ' has spaces around it",
    ),
    (
        "a value YAML reads as a boolean",
        "policy: p\nchecks:\n  - id: no\n    polarity: attack\n    detect: tool_called('x')\n",
        "3:9: checks[0].id: Input should be a valid string: YAML reads no as false; "
        "quote it ('no')",
    ),
    (
        "a key YAML reads as a boolean",
        "policy: p\ntools:\n  on: {side_effects: none}\nchecks:\n  - id: a\n"
        "    polarity: attack\n    detect: tool_called('x')\n",
        "3:3: mapping keys must be strings: YAML reads on as true; quote it ('on')",
    ),
    (
        "misspelt key of the judge block",
        "policy: p\njudge:\n  base_ulr: http://127.0.0.1:1\n  model: m\nchecks:\n"
        "  - id: a\n    polarity: attack\n    detect: tool_called('x')\n",
        "3:3: judge: unknown key 'base_ulr' — did you mean 'base_url'?",
    ),
    (
        "a kind of one's own that is a standard kind misspelt",
        "policy: p\nside_effect_kinds: [http_requests]\nchecks:\n  - id: a\n"
        "    polarity: attack\n    detect: side_effect('http_requests')\n",
        "2:21: side_effect_kinds[0]: 'http_requests' is the standard kind 'http_request' "
        "misspelt — did you mean 'http_request'? (a kind of your own needs a name of its own)",
    ),
    (
        "a standard kind declared as one's own",
        "policy: p\nside_effect_kinds: [db_query]\nchecks:\n  - id: a\n"
        "    polarity: attack\n    detect: side_effect('db_query')\n",
        "2:21: side_effect_kinds[0]: 'db_query' is a standard kind: use it without declaring it",
    ),
    (
        "a check repeated through a YAML alias",
        "policy: p\nchecks:\n  - &c\n    id: a\n    polarity: attack\n"
        "    detect: tool_called('x')\n  - *c\n",
        "4:9: duplicate check id 'a': checks[1] is a YAML alias of checks[0] (line 3)",
    ),
    (
        "merge key",
        "policy: p\nbase: &b {polarity: attack}\nchecks:\n  - <<: *b\n    id: a\n"
        "    detect: tool_called('x')\n",
        "4:5: merge keys ('<<') are not supported: write each key out",
    ),
    ("empty file", "", "1:1: the policy file is empty"),
    ("comments only", "# nothing\n", "1:1: the policy file is empty"),
    ("NUL byte", "policy: p\x00\n", "1:10: not a text file"),
    (
        "control character",
        "policy: p\x07\n",
        "1:10: not valid YAML: special characters are not allowed",
    ),
    (
        "python tag on a scalar",
        "policy: !!python/name:os.system\nchecks: []\n",
        "1:9: not valid YAML: could not determine a constructor for the tag",
    ),
]


@pytest.mark.parametrize(
    ("text", "expected"),
    [case[1:] for case in STRUCTURE_REJECTIONS],
    ids=[case[0] for case in STRUCTURE_REJECTIONS],
)
def test_structure_rejections_are_located(tmp_path, text, expected):
    path, error = rejected(tmp_path, text)
    assert str(error).startswith(f"{path}:{expected}")


def test_binary_file(tmp_path):
    path, error = rejected(tmp_path, b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    assert str(error) == f"{path}:1:1: not a UTF-8 text file"


def test_invalid_utf8_is_located(tmp_path):
    path, error = rejected(tmp_path, b"policy: p\nchecks: \xff\n")
    assert str(error) == f"{path}:2:9: not a UTF-8 text file"


def test_missing_file(tmp_path):
    path = tmp_path / "absent.yaml"
    with pytest.raises(PolicyError) as caught:
        load_policy(path)
    assert str(caught.value) == f"{path}: cannot read policy file: No such file or directory"
    assert caught.value.line is None


TOO_LARGE = "larger than 1 MiB: not a policy file (a trace file given as --policy?)"


def test_a_policy_larger_than_the_cap_is_refused_before_it_is_read(tmp_path):
    # composing a 50 MB policy took minutes and gigabytes before its size was refused
    padding = "#" + "x" * MAX_POLICY_BYTES + "\n"
    path, error = rejected(tmp_path, TEMPLATE.format("tool_called('x')") + padding)
    assert str(error) == f"{path}: {TOO_LARGE}"
    with pytest.raises(PolicyError, match=rf"^<policy>: {re.escape(TOO_LARGE)}$"):
        parse_policy(TEMPLATE.format("tool_called('x')") + padding)
    assert load_policy(write(tmp_path, TEMPLATE.format("tool_called('x')") + padding[:-100_000]))


def test_utf8_bom_is_accepted(tmp_path):
    path = write(tmp_path, "\ufeff" + DESIGN_POLICY)
    assert load_policy(path).name == "exfiltration-guard"


def test_policy_error_is_a_value_error():
    assert issubclass(PolicyError, ValueError)
    assert str(PolicyError("f.yaml", 3, 7, "bad")) == "f.yaml:3:7: bad"


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_an_endless_file_is_read_no_further_than_a_policy_can_be():
    # --policy /dev/zero (or a multi-GiB trace file given as --policy) must not be read whole.
    with pytest.raises(PolicyError) as caught:
        load_policy("/dev/zero")
    assert str(caught.value) == (f"/dev/zero: {TOO_LARGE}")
