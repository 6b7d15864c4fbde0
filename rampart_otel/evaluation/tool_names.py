"""How a check's tool-name pattern meets the names of a run's tool calls.

One rule for every evaluator that names a tool (``tool_called``, ``tool_result``, and what
is built on them): a call matches when the pattern matches one of its names
(``ToolCall.names``: the name the trace records and, where the framework qualified it, the
function's own name). A negated pattern (``not_``, ``not_in``) matches a call none of whose
names the pattern it negates matches.

A near miss: the pattern matches no call of the run, but some call's name holds what it
names as a component behind a qualifier (``weather-send_report``, ``mcp__files__read``,
``tools.send_report``): that call may be the one the check means, under a name this tool
does not know the framework's rule for. A call whose name the trace does not record (a
model's request with its id and arguments but no name) may be any tool: it is a near miss
of every positive pattern. The evaluators leave such a call undecided, so a
check never says "did not happen" of a call it may have missed by its name. The test is
made on positive patterns only (a literal name, ``one_of``, ``glob``, ``regex``), tried on
each component of the name and each suffix after a separator; a negated or other pattern
has no near misses. A name a literal or ``one_of`` lists in other letter case
(``Send_Report`` for ``send_report``) is a near miss too: tool names are case-sensitive, and
a check's slip of case would otherwise say "did not happen" of every call.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from rampart_otel.evaluation.matchers import (
    Equals,
    Glob,
    Matcher,
    Not,
    NotIn,
    OneOf,
    Regex,
    any_match,
)
from rampart_otel.lazy_regex import LazyPattern
from rampart_otel.model import ToolCall

# Separators frameworks put between a qualifier and a tool's own name: Semantic Kernel's
# ``-``, Claude Code's MCP tools ``mcp__<server>__<tool>``, dotted and path-like names.
SEPARATORS = ("__", "-", ".", "/", ":")
_SPLIT = LazyPattern("|".join(re.escape(s) for s in SEPARATORS))


def tool_name_problem(function: str, name: object) -> None:
    """Refuse a literal tool name no call can have by a slip: empty (a check on it would say
    "it did not happen" on every run), with spaces around it, or holding an invisible
    character (a zero-width space pasted with it)."""
    if name == "":
        raise ValueError(f"{function}() needs a non-empty tool name")
    if not isinstance(name, str):
        return
    if name != name.strip():
        raise ValueError(f"{function}()'s tool name {name!r} has spaces around it")
    hidden = next((char for char in name if unicodedata.category(char) in ("Cc", "Cf")), None)
    if hidden is not None:
        raise ValueError(
            f"{function}()'s tool name {name!r} holds an invisible character (U+{ord(hidden):04X})"
        )


def name_matches(matcher: Matcher, call: ToolCall) -> bool | None:
    """Whether ``matcher`` matches the call by one of its names (a negation: by none)."""
    return names_match(matcher, call.names)


def names_match(matcher: Matcher, names: tuple[str, ...]) -> bool | None:
    if isinstance(matcher, Not):
        inner = names_match(matcher.inner, names)
        return None if inner is None else not inner
    if isinstance(matcher, NotIn):
        return not names_match(OneOf(matcher.values), names)
    return any_match(matcher, names)


class NearMissKind(StrEnum):
    """How a call's name holds what the pattern names."""

    QUALIFIED = "qualified"  # it ends the name, after a qualifier and a separator
    COMPONENT = "component"  # it is a component of the name, elsewhere in it
    UNNAMED = "unnamed"  # the trace records no name for the call: it may be any tool
    CASE = "case"  # the name is one the pattern lists, in other letter case


@dataclass(frozen=True, slots=True)
class NearMiss:
    """A call the pattern did not match by name that may still be the tool it means."""

    call: ToolCall
    kind: NearMissKind
    part: str  # the part of the name the pattern matched


# A pattern meets the same few names run after run (a service's tools): each answer is a
# function of the pattern and the names alone, so it is worked out once and then looked up,
# in one table per pattern (found once per run and pattern, then one lookup per call).
# Bounded (names are trace content, so a sender could make every one new): cleared when the
# tables hold ``_MEMO_LIMIT`` answers. Patterns are keys by value; the only patterns equal
# by value but not alike (a literal 1 and True) name no tool either way: a name is a string.
_MEMO_LIMIT = 16_384
_named: dict[Matcher, dict[tuple[str, ...], bool]] = {}
_missed: dict[Matcher, dict[tuple[str, ...], tuple[NearMissKind, str] | None]] = {}
_held = [0]  # answers in both tables
_UNSEEN: Any = object()


def _table(
    tables: dict[Matcher, dict[tuple[str, ...], Any]], matcher: Matcher
) -> dict[tuple[str, ...], Any]:
    table = tables.get(matcher)
    if table is None:
        table = tables[matcher] = {}
    return table


def _remember(table: dict[tuple[str, ...], Any], names: tuple[str, ...], answer: Any) -> None:
    if _held[0] >= _MEMO_LIMIT:
        for tables in (_named, _missed):
            for each in tables.values():
                each.clear()
        _held[0] = 0
    table[names] = answer
    _held[0] += 1


def named_calls(matcher: Matcher, calls: list[ToolCall]) -> list[tuple[ToolCall, NearMiss | None]]:
    """The calls ``matcher`` names, in the run's order; when it names none, its near misses
    (each with how it was missed)."""
    table = _table(_named, matcher)
    named: list[tuple[ToolCall, NearMiss | None]] = []
    for call in calls:
        names = call.names
        found = table.get(names)
        if found is None:
            found = names_match(matcher, names) is True
            _remember(table, names, found)
        if found:
            named.append((call, None))
    return named or [(miss.call, miss) for miss in _misses(matcher, calls)]


def near_misses(matcher: Matcher, calls: list[ToolCall]) -> list[NearMiss]:
    """The calls whose name holds what ``matcher`` names as a component; none when it
    matches a call by name, or is not a positive name pattern."""
    if any(name_matches(matcher, call) is True for call in calls):
        return []
    return _misses(matcher, calls)


def _misses(matcher: Matcher, calls: list[ToolCall]) -> list[NearMiss]:
    """``near_misses`` where no call's name matched already."""
    if not _positive(matcher):
        return []
    table = _table(_missed, matcher)
    misses = []
    for call in calls:
        names = call.names
        how = table.get(names, _UNSEEN)
        if how is _UNSEEN:
            how = _near_miss(matcher, names)
            _remember(table, names, how)
        if how is not None:
            misses.append(NearMiss(call, *how))
    return misses


def _positive(matcher: Matcher) -> bool:
    if isinstance(matcher, Equals):
        return isinstance(matcher.literal, str)
    return isinstance(matcher, (OneOf, Glob, Regex))


def _listed_names(matcher: Matcher) -> set[str]:
    """The names a literal or ``one_of`` pattern lists, case-folded."""
    if isinstance(matcher, Equals) and isinstance(matcher.literal, str):
        return {matcher.literal.casefold()}
    if isinstance(matcher, OneOf):
        return {value.casefold() for value in matcher.values if isinstance(value, str)}
    return set()


def _near_miss(matcher: Matcher, names: tuple[str, ...]) -> tuple[NearMissKind, str] | None:
    """How a call of these names is a near miss of ``matcher``, and the part it matched."""
    if not any(names):
        return NearMissKind.UNNAMED, ""
    listed = _listed_names(matcher)
    for name in names:
        if name.casefold() in listed:
            return NearMissKind.CASE, name
        cuts = [m.end() for m in _SPLIT.finditer(name)]
        for cut in cuts:  # the suffixes after each separator: the widest first
            if matcher.match(name[cut:]) is True:
                return NearMissKind.QUALIFIED, name[cut:]
        if not cuts:
            continue
        for part in _SPLIT.split(name):
            if part and matcher.match(part) is True:
                return NearMissKind.COMPONENT, part
    return None
