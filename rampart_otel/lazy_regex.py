"""Regular expressions compiled when first used, not when their module is imported (issue 46,
start-up).

Every ``score`` imports the modules of every convention, codec and evaluator it may meet;
compiling all their patterns at import cost each process ~10 ms of CPU before its first
span, for patterns most runs never use (a Claude Code header, a SQL statement, a Haystack
role). ``LazyPattern`` holds the source and compiles it at the first method called; the
compiled pattern's methods are then the instance's own attributes, so a pattern used on
every span pays an attribute lookup more per call than a module-level ``re.compile``
(~8 ns on a 150 ns search).

    _WORD = LazyPattern(r"\\w+")
    _WORD.fullmatch(text)  # compiled here, once

Only the standard library: ``watch`` (loaded into agents' processes) uses it.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, AnyStr, Generic

# What the compiled pattern lends the instance at the first use.
_LENT = (
    "search",
    "match",
    "fullmatch",
    "finditer",
    "findall",
    "sub",
    "subn",
    "split",
    "groups",
    "groupindex",
)

# Patterns compiled so far in this process (tests count them: tests/cli/test_startup.py).
compiled_count = 0


class LazyPattern(Generic[AnyStr]):
    """``re.compile(pattern, flags)``, done at the first use of a method of the pattern."""

    def __init__(self, pattern: AnyStr, flags: int = 0) -> None:
        self.pattern: AnyStr = pattern
        self._flags = flags

    def __repr__(self) -> str:
        return f"LazyPattern({self.pattern!r}, {self._flags!r})"

    if TYPE_CHECKING:
        groups: int
        groupindex: dict[str, int]

        def search(
            self, string: AnyStr, pos: int = 0, endpos: int = sys.maxsize
        ) -> re.Match[AnyStr] | None: ...

        def match(
            self, string: AnyStr, pos: int = 0, endpos: int = sys.maxsize
        ) -> re.Match[AnyStr] | None: ...

        def fullmatch(
            self, string: AnyStr, pos: int = 0, endpos: int = sys.maxsize
        ) -> re.Match[AnyStr] | None: ...

        def finditer(
            self, string: AnyStr, pos: int = 0, endpos: int = sys.maxsize
        ) -> Iterator[re.Match[AnyStr]]: ...

        def findall(self, string: AnyStr, pos: int = 0, endpos: int = sys.maxsize) -> list[Any]: ...

        def sub(
            self,
            repl: AnyStr | Callable[[re.Match[AnyStr]], AnyStr],
            string: AnyStr,
            count: int = 0,
        ) -> AnyStr: ...

        def subn(
            self,
            repl: AnyStr | Callable[[re.Match[AnyStr]], AnyStr],
            string: AnyStr,
            count: int = 0,
        ) -> tuple[AnyStr, int]: ...

        def split(self, string: AnyStr, maxsplit: int = 0) -> list[AnyStr | Any]: ...

    else:

        def __getattr__(self, name: str) -> Any:
            # Called only for what the instance does not hold yet: the first use.
            if name not in _LENT:
                raise AttributeError(name)
            global compiled_count
            compiled = re.compile(self.pattern, self._flags)
            compiled_count += 1
            for lent in _LENT:
                setattr(self, lent, getattr(compiled, lent))
            return getattr(compiled, name)
