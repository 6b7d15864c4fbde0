"""``detect`` expressions: Python syntax, parsed with ``ast`` and built from a whitelist.

Nothing here evaluates, executes or compiles policy text. The AST is walked node by node;
each allowed node maps to a constructor call of ours, anything else is a PolicyError
located at the offending token.
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any, NoReturn

import rampart_otel.evaluation.matchers as m
from rampart_otel import vocabulary
from rampart_otel.errors import PolicyError
from rampart_otel.evaluation.evaluators.algebra import Evaluator
from rampart_otel.evaluation.evaluators.before import before, event_operand
from rampart_otel.evaluation.evaluators.response_contains import response_contains
from rampart_otel.evaluation.evaluators.side_effect import side_effect
from rampart_otel.evaluation.evaluators.tool_called import tool_called
from rampart_otel.vocabulary import (
    detail_problem,
    kind_problem,
    names,
    number_detail_problem,
    unknown,
)

if TYPE_CHECKING:
    from rampart_otel.evaluation.judge_endpoint import JudgeClient

_count_words = {1: "one", 2: "two"}

Locate = Callable[[int], tuple[int, int]]  # index into the expression -> 1-based (line, column)

MAX_LENGTH = 20_000
MAX_DEPTH = 100

EVALUATORS = names(vocabulary.EVALUATORS)
# Positional arguments each function takes (fewest, most), and its keyword arguments:
# None means any keyword (argument or detail matchers).
_POSITIONAL: dict[str, tuple[int, int]] = {
    "tool_result": (1, 2),
    "before": (2, 2),
    "flows": (2, 2),
    "at_least": (2, 2),
    "at_most": (2, 2),
    "repeated": (2, 2),
    "ip_in": (1, 2),
    "secret": (0, 1),
}
_KEYWORDS: dict[str, tuple[str, ...] | None] = {
    "tool_called": None,
    "side_effect": None,
    "tool_result": None,
    "flows": ("min_length",),
    "judge": ("over",),
}
MATCHERS = names(vocabulary.MATCHERS)
ALLOWED_CALLS = ", ".join(EVALUATORS + MATCHERS)
JUDGE_OVER = names(vocabulary.JUDGE_OVER)

_FORBIDDEN: dict[type[ast.AST], str] = {
    ast.Subscript: "subscripts are not allowed",
    ast.Lambda: "lambda is not allowed",
    ast.ListComp: "comprehensions are not allowed",
    ast.SetComp: "comprehensions are not allowed",
    ast.DictComp: "comprehensions are not allowed",
    ast.GeneratorExp: "generator expressions are not allowed",
    ast.JoinedStr: "f-strings are not allowed",
    ast.FormattedValue: "f-strings are not allowed",
    ast.Starred: "* unpacking is not allowed",
    ast.Compare: "comparisons are not allowed; use a matcher such as one_of([...])",
    ast.BoolOp: "'and' / 'or' are not allowed; combine evaluators with & and |",
    ast.IfExp: "conditional expressions are not allowed",
    ast.Dict: "dict literals are not allowed",
    ast.Set: "set literals are not allowed",
    ast.NamedExpr: "assignment expressions are not allowed",
    ast.Await: "await is not allowed",
    ast.Slice: "slices are not allowed",
}


def _default_locate(expression: str) -> Locate:
    def locate(index: int) -> tuple[int, int]:
        before = expression[:index]
        line_start = before.rfind("\n") + 1
        return before.count("\n") + 1, index - line_start + 1

    return locate


def parse_detect(
    expression: str,
    *,
    source: str = "<detect>",
    locate: Locate | None = None,
    judge: JudgeClient | None = None,
    side_effect_kinds: Collection[str] | None = None,
) -> Evaluator:
    """Parse a detect expression into an Evaluator, or raise a located PolicyError.

    ``judge``: the endpoint ``judge(...)`` calls ask; without one they are refused.
    ``side_effect_kinds``: the kinds of its own a policy declares; given, a side-effect kind
    neither standard nor declared is refused (a detail key unknown to a standard kind always
    is). Without it the kinds wait for the policy: ``Policy`` checks every expression.
    """
    where = locate or _default_locate(expression)
    if not isinstance(expression, str):
        raise PolicyError(source, *where(0), "detect must be a string expression")
    if not expression.strip():
        raise PolicyError(source, *where(0), "detect is empty")
    if len(expression) > MAX_LENGTH:
        raise PolicyError(source, *where(0), f"detect is longer than {MAX_LENGTH} characters")
    tree, shift = _parse(expression, source, where)
    builder = _Builder(expression, shift, source, where, judge, side_effect_kinds)
    built = builder.evaluator(tree.body, 0)
    builder.known_side_effects()
    return built


def _parse(expression: str, source: str, where: Locate) -> tuple[ast.Expression, int]:
    """Parse; a multi-line or indented expression is retried inside parentheses.

    A block scalar's expression spans lines the way Python allows only inside brackets.

    Returns the tree and how many lines the wrapper added before the expression.
    """
    try:
        return _ast_parse(expression), 0
    except SyntaxError as first:
        error = first
        shift = 0
        if "\n" in expression.strip() or expression[:1].isspace():
            try:
                return _ast_parse(f"(\n{expression}\n)"), 1
            except SyntaxError as wrapped:
                lines = expression.count("\n") + 1
                if wrapped.lineno is not None and 2 <= wrapped.lineno <= lines + 1:
                    error, shift = wrapped, 1
        raise _syntax_error(error, expression, shift, source, where) from None
    except (RecursionError, MemoryError, ValueError) as exc:
        raise PolicyError(source, *where(0), f"detect cannot be parsed: {exc}") from None


def _ast_parse(text: str) -> ast.Expression:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. "\d" in a regex is a SyntaxWarning only
        return ast.parse(text, mode="eval")


def _syntax_error(
    error: SyntaxError, expression: str, shift: int, source: str, where: Locate
) -> PolicyError:
    lines = expression.split("\n")
    line = (error.lineno or 1) - shift
    if not 1 <= line <= len(lines) or not error.offset:
        index = len(expression.rstrip())
    else:
        index = sum(len(text) + 1 for text in lines[: line - 1])
        index += min(max(error.offset - 1, 0), len(lines[line - 1]))
    return PolicyError(source, *where(index), f"invalid detect expression: {error.msg}")


class _Builder:
    """Maps whitelisted AST nodes to evaluator / matcher / literal values."""

    def __init__(
        self,
        expression: str,
        shift: int,
        source: str,
        where: Locate,
        judge: JudgeClient | None = None,
        side_effect_kinds: Collection[str] | None = None,
    ) -> None:
        self.judge = judge
        self.side_effect_kinds = side_effect_kinds
        # side_effect(...) calls, checked against the vocabulary once the whole is built
        self.side_effects: list[tuple[ast.expr, str, list[ast.keyword], dict[str, Any]]] = []
        self.lines = expression.split("\n")
        self.shift = shift
        self.source = source
        self.where = where

    # -- positions ---------------------------------------------------------------------

    def _index(self, lineno: int, col_offset: int) -> int:
        """ast gives a 1-based line and a UTF-8 byte column; we want a character index."""
        line = min(max(lineno - self.shift, 1), len(self.lines))
        text = self.lines[line - 1]
        column = len(text.encode("utf-8")[:col_offset].decode("utf-8", errors="ignore"))
        return sum(len(t) + 1 for t in self.lines[: line - 1]) + column

    def fail(self, node: ast.AST, message: str) -> NoReturn:
        index = self._index(getattr(node, "lineno", 1), getattr(node, "col_offset", 0))
        raise PolicyError(self.source, *self.where(index), message)

    def fail_after(self, node: ast.expr, message: str) -> NoReturn:
        """Locate at the token after ``node`` (an operator, a dot), past closing parens."""
        index = self._index(node.end_lineno or 1, node.end_col_offset or 0)
        flat = "\n".join(self.lines)
        while index < len(flat) and flat[index] in " \t\r\n)":
            index += 1
        raise PolicyError(self.source, *self.where(index), message)

    # -- kinds of value ------------------------------------------------------------------

    def evaluator(self, node: ast.expr, depth: int) -> Evaluator:
        value = self.value(node, depth)
        if not isinstance(value, Evaluator):
            what = "a matcher" if isinstance(value, m.Matcher) else "a literal"
            self.fail(
                node,
                f"expected an evaluator ({', '.join(EVALUATORS)} or a combination with &, |, ~), "
                f"got {what}",
            )
        return value

    def matcher(self, node: ast.expr, depth: int) -> m.Matcher:
        self.known_matcher(node)
        value = self.value(node, depth)
        if isinstance(value, Evaluator):
            self.fail(node, "expected a matcher or a literal here, got an evaluator")
        if value is None:
            self.fail(node, "None cannot be matched: a missing value is always unknown")
        try:
            return m.as_matcher(value)
        except (TypeError, ValueError) as exc:
            self.fail(node, str(exc))

    def literal_str(self, node: ast.expr, what: str) -> str:
        if not isinstance(node, ast.Constant) or not isinstance(node.value, str):
            self.fail(node, f"{what} must be a string literal")
        return node.value

    def scalar(self, node: ast.expr, what: str) -> Any:
        if isinstance(node, (ast.Constant, ast.UnaryOp)):
            value = self.value(node, 0)
            if isinstance(value, (str, int, float, bool)):
                return value
        self.fail(node, f"{what} must be a string, number or boolean literal")

    def literal_list(self, node: ast.expr, what: str) -> list[Any]:
        if not isinstance(node, (ast.List, ast.Tuple)):
            self.fail(node, f"{what} must be a list literal such as ['a', 'b']")
        return [self.scalar(item, f"each item of {what}") for item in node.elts]

    # -- the whitelist -----------------------------------------------------------------

    def value(self, node: ast.expr, depth: int) -> Any:
        if depth >= MAX_DEPTH:
            self.fail(node, f"detect is nested more than {MAX_DEPTH} levels deep")
        if isinstance(node, ast.BinOp):
            if isinstance(node.op, (ast.BitAnd, ast.BitOr)):
                left = self.evaluator(node.left, depth + 1)
                right = self.evaluator(node.right, depth + 1)
                return left & right if isinstance(node.op, ast.BitAnd) else left | right
            self.fail_after(node.left, "only &, | and ~ may combine evaluators")
        if isinstance(node, ast.UnaryOp):
            return self.unary(node, depth)
        if isinstance(node, ast.Call):
            return self.call(node, depth)
        if isinstance(node, ast.Constant):
            if node.value is None or isinstance(node.value, (str, int, float, bool)):
                return node.value
            self.fail(node, f"{type(node.value).__name__} literals are not allowed")
        if isinstance(node, (ast.List, ast.Tuple)):
            return tuple(self.scalar(item, "each item of a list literal") for item in node.elts)
        if isinstance(node, ast.Name):
            self.fail(
                node,
                f"name {node.id!r} is not allowed: write strings in quotes, and call only "
                f"{ALLOWED_CALLS}",
            )
        if isinstance(node, ast.Attribute):
            self.fail_after(node.value, f"attribute access ('.{node.attr}') is not allowed")
        for kind, message in _FORBIDDEN.items():
            if isinstance(node, kind):
                self.fail(node, message)
        self.fail(node, f"{type(node).__name__} is not allowed in detect")

    def unary(self, node: ast.UnaryOp, depth: int) -> Any:
        if isinstance(node.op, ast.Invert):
            return ~self.evaluator(node.operand, depth + 1)
        if isinstance(node.op, ast.Not):
            self.fail(
                node, "'not' is not allowed; negate an evaluator with ~ or a matcher with not_()"
            )
        operand = node.operand
        if (
            isinstance(operand, ast.Constant)
            and isinstance(operand.value, (int, float))
            and not isinstance(operand.value, bool)
        ):
            return -operand.value if isinstance(node.op, ast.USub) else operand.value
        self.fail(node, "only a number literal may carry a sign")

    def unknown_function(self, name: str) -> str:
        near = vocabulary.closest(name, EVALUATORS + MATCHERS)
        if near:
            return unknown("function", name, near)
        return f"unknown function {name!r}; allowed: {ALLOWED_CALLS}"

    def known_side_effects(self) -> None:
        """Each kind standard or declared, each detail key one its kind has (once the
        expression is built: a mistake of form is reported before a mistake of word)."""
        for node, kind, keywords, matchers in self.side_effects:
            if self.side_effect_kinds is not None:
                problem = kind_problem(kind, self.side_effect_kinds)
                if problem:
                    self.fail(node, problem)
            for keyword in keywords:
                key = keyword.arg or ""
                problem = detail_problem(kind, key)
                if problem:
                    self.fail(keyword, problem)
                literals = m.compared_literals(matchers[key]) if key in matchers else ()
                problem = number_detail_problem(kind, key, literals)
                if problem:
                    self.fail(keyword.value, problem)

    def known_matcher(self, node: ast.expr) -> None:
        """Where a matcher (or a literal) is expected, an unknown call is an unknown matcher."""
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            name = node.func.id
            if name not in MATCHERS and name not in EVALUATORS:
                self.fail(node.func, unknown("matcher", name, MATCHERS))

    def call(self, node: ast.Call, depth: int) -> Any:
        func = node.func
        if isinstance(func, ast.Attribute):
            self.fail_after(func.value, f"attribute access ('.{func.attr}') is not allowed")
        if not isinstance(func, ast.Name):
            self.fail(func, f"only calls of {ALLOWED_CALLS} are allowed")
        name = func.id
        if name not in EVALUATORS and name not in MATCHERS:
            self.fail(func, self.unknown_function(name))
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                self.fail(arg, "* unpacking is not allowed")
        given: set[str] = set()
        for keyword in node.keywords:
            if keyword.arg is None:
                self.fail(keyword, "** unpacking is not allowed")
            if keyword.arg in given:  # ast keeps both; a call would keep only the last
                self.fail(keyword, f"{name}() is given the keyword argument {keyword.arg!r} twice")
            given.add(keyword.arg)
        fewest, most = _POSITIONAL.get(name, (1, 1))
        if not fewest <= len(node.args) <= most:
            where = node.args[most] if len(node.args) > most else func
            wanted = f"exactly {_count_words[most]}" if fewest == most else f"{fewest} or {most}"
            plural = "" if most == 1 else "s"
            self.fail(
                where,
                f"{name}() takes {wanted} positional argument{plural} ({len(node.args)} given)",
            )
        allowed = _KEYWORDS.get(name, ())
        for keyword in node.keywords:
            if allowed is not None and keyword.arg not in allowed:
                if not allowed:
                    self.fail(keyword, f"{name}() takes no keyword arguments")
                self.fail(
                    keyword,
                    f"{name}() takes no keyword argument {keyword.arg!r}; "
                    f"allowed: {', '.join(allowed)}",
                )
        try:
            return self.construct(name, node.args, node.keywords, depth)
        except (TypeError, ValueError) as exc:
            if isinstance(exc, PolicyError):
                raise
            self.fail(node.args[-1] if len(node.args) == 1 else node, str(exc))

    def construct(
        self, name: str, args: list[ast.expr], keywords: list[ast.keyword], depth: int
    ) -> Any:
        inner = depth + 1
        if name == "secret":
            if not args:
                return m.secret()
            return m.secret(self.literal_list(args[0], "secret()'s detectors"))
        arg = args[0]
        if name == "ip_in":
            exempt = self.literal_list(args[1], "ip_in()'s exempt hosts") if len(args) > 1 else []
            return m.ip_in(self.literal_list(arg, "ip_in()'s ranges"), exempt)
        if name == "path_under":
            return m.path_under(self.literal_str(arg, "path_under()'s root"))
        if name in ("tool_called", "tool_result"):
            self.known_matcher(arg)
            first = self.value(arg, inner)
            if not isinstance(first, (str, m.Matcher)):
                self.fail(arg, f"{name}() takes a tool name (string) or a matcher")
            kwargs = {k.arg: self.matcher(k.value, inner) for k in keywords if k.arg}
            if name == "tool_called":
                return tool_called(first, **kwargs)
            from rampart_otel.evaluation.evaluators.tool_result import tool_result  # startup

            text = self.text_query(args[1], inner, name) if len(args) > 1 else None
            return tool_result(first, text, **kwargs)
        if name == "side_effect":
            kind = self.literal_str(arg, "the side-effect kind")
            kwargs = {k.arg: self.matcher(k.value, inner) for k in keywords if k.arg}
            self.side_effects.append((arg, kind, keywords, kwargs))
            return side_effect(kind, **kwargs)
        if name in ("response_contains", "input_contains"):
            text = self.text_query(arg, inner, name)
            if name == "response_contains":
                return response_contains(text)
            from rampart_otel.evaluation.evaluators.input_contains import input_contains  # startup

            return input_contains(text)
        if name in ("before", "flows"):
            first_event = self.event(args[0], inner, name, "first")
            second_event = self.event(args[1], inner, name, "second")
            if name == "before":
                return before(first_event, second_event)
            from rampart_otel.evaluation.evaluators.flows import flows  # startup: flows checks

            options = {k.arg: self.whole_number(k.value, k.arg) for k in keywords if k.arg}
            try:
                return flows(first_event, second_event, **options)
            except TypeError as exc:
                self.fail(args[1] if "sink" in str(exc) else args[0], str(exc))
            except ValueError as exc:
                self.fail(keywords[0].value, str(exc))
        if name in ("repeated", "at_least", "at_most"):  # startup: counting checks only
            from rampart_otel.evaluation.evaluators.counts import at_least, at_most, repeated
        if name == "repeated":
            n = self.whole_number(arg, "the count")
            try:
                return repeated(n, self.evaluator(args[1], inner))
            except TypeError as exc:
                self.fail(args[1], str(exc))
            except ValueError as exc:
                self.fail(arg, str(exc))
        if name in ("at_least", "at_most"):
            n = self.whole_number(arg, "the count")
            counted = self.event(args[1], inner, name, "second")
            try:
                return at_least(n, counted) if name == "at_least" else at_most(n, counted)
            except ValueError as exc:
                self.fail(arg, str(exc))
        if name == "judge":
            question = self.literal_str(arg, "the judge's question")
            over = {k.arg: self.literal_str(k.value, "over") for k in keywords if k.arg}
            for keyword in keywords:
                value = over[keyword.arg or ""]
                if value not in JUDGE_OVER:
                    self.fail(keyword.value, unknown("judge(over=...) value", value, JUDGE_OVER))
            if self.judge is None:
                self.fail(
                    arg,
                    "judge() needs a judge endpoint: add a `judge:` block (base_url, model) "
                    "to the policy; see docs/policy.md",
                )
            from rampart_otel.evaluation.evaluators.judge import judge  # startup: judge checks

            return judge(question, over=over.get("over", "response"), client=self.judge)
        if name == "regex":
            return m.regex(self.literal_str(arg, "the regex pattern"))
        if name == "glob":
            return m.glob(self.literal_str(arg, "the glob pattern"))
        if name == "contains":
            return m.contains(self.scalar(arg, "the contains() argument"))
        if name == "one_of":
            return m.one_of(self.literal_list(arg, "one_of()'s argument"))
        if name == "not_in":
            return m.not_in(self.literal_list(arg, "not_in()'s argument"))
        return m.not_(self.matcher(arg, inner))  # not_

    def text_query(self, node: ast.expr, depth: int, name: str) -> str | m.Matcher:
        self.known_matcher(node)
        value = self.value(node, depth)
        if not isinstance(value, (str, m.Matcher)):
            self.fail(node, f"{name}() takes a string or a matcher here")
        return value

    def whole_number(self, node: ast.expr, what: str) -> int:
        value = self.value(node, 0) if isinstance(node, (ast.Constant, ast.UnaryOp)) else None
        if not isinstance(value, int) or isinstance(value, bool):
            self.fail(node, f"{what} must be a whole number literal")
        return value

    def event(self, node: ast.expr, depth: int, name: str, which: str) -> Evaluator:
        value = self.evaluator(node, depth)
        try:
            return event_operand(value, name, which)
        except TypeError as exc:
            self.fail(node, str(exc))
