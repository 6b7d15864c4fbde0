"""What a recorded SQL statement says of itself: its operation, and the table it writes.

Instrumentations such as ``opentelemetry-instrumentation-sqlite3`` record ``db.statement``
and no ``db.operation.name``; the operation is the statement's first keyword, as the
instrumentations that record it read it. Only an unambiguous answer is given: a statement
this reader cannot read without guessing (several statements, ``WITH …`` whose body may
write, ``EXPLAIN``, which may run the statement it explains, a comment or quote whose end
the dialects disagree on) gives nothing, and a check on the operation stays UNDETERMINED.

Only dialects that end every statement with ``;`` are read (T-SQL runs ``SELECT 1 DELETE
FROM t`` as two statements without one). Statements are trace content: reading one is a
few plain searches, linear in its length, and one longer than ``MAX_LENGTH`` is not read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import islice

from rampart_otel.lazy_regex import LazyPattern

# db.system(.name) values whose statements this reader understands.
SQL_SYSTEMS = frozenset(
    {
        "sqlite",
        "sqlite3",  # better-sqlite3's instrumentation
        "postgresql",
        "mysql",
        "mariadb",
        "cockroachdb",
        "oracle",
        "oracle.db",
        "h2",
        "h2database",
        "hsqldb",
        "derby",
        "duckdb",
        "clickhouse",
        "trino",
    }
)

# Statement verbs reported as the operation; any other first word gives none.
OPERATIONS = frozenset(
    {
        "SELECT",
        "INSERT",
        "UPDATE",
        "DELETE",
        "REPLACE",
        "MERGE",
        "UPSERT",
        "CREATE",
        "DROP",
        "ALTER",
        "TRUNCATE",
        "GRANT",
        "REVOKE",
        "COPY",
    }
)

_QUOTED = "quoted"  # a token kind: an identifier written in quotes
_WORD = "word"
_OTHER = "other"
_SELECT_ENDS = frozenset(
    {"WHERE", "ORDER", "GROUP", "LIMIT", "HAVING", "OFFSET", "FETCH", "WINDOW", "FOR"}
)
_TABLE_WORDS = frozenset({"TEMP", "TEMPORARY", "UNLOGGED"})


@dataclass(frozen=True, slots=True)
class _Token:
    """One token of a SQL statement, as the operation's reader sees it."""

    kind: str  # _WORD, _QUOTED or _OTHER
    text: str  # a word or number as written, a quoted identifier unquoted, or one character

    @property
    def upper(self) -> str:
        return self.text.upper() if self.kind == _WORD else ""


@dataclass(frozen=True, slots=True)
class StatementSummary:
    """The operation and the table a statement names; None where it does not say plainly."""

    operation: str | None = None
    table: str | None = None


UNREAD = StatementSummary()


def summarize(statement: str) -> StatementSummary:
    """The statement's operation (its first keyword, upper case) and, for one that names a
    single table it reads or writes, that table; ``UNREAD`` when either would be a guess."""
    read = _skeleton(statement)
    if read is None:
        return UNREAD
    skeleton, quoted = read
    statements = [part for part in skeleton.split(";") if part.strip()]
    if len(statements) != 1:
        return UNREAD
    (text,) = statements
    first = _IDENT.match(text.lstrip())
    operation = first.group().upper() if first else ""
    if operation not in OPERATIONS:
        return UNREAD
    # The table of most forms is named within their first words; a SELECT's is read from
    # the whole of a short one only.
    limit = SELECT_TOKENS + 1 if operation == "SELECT" else HEAD_TOKENS
    words = [_token(found, quoted) for found in islice(_TOKENS.finditer(text), limit)]
    if operation == "SELECT" and len(words) > SELECT_TOKENS:
        return StatementSummary(operation)
    return StatementSummary(operation, _table(operation, words))


# The skeleton of a statement: its text with every string literal replaced by ``''``, every
# quoted identifier by a placeholder and comments by a space, so that what is left can be
# split on ``;`` and read word by word. Each step is a plain search: linear on any text.
_PLAIN = LazyPattern(r"(?:[^'\"`\[$#/-]|/(?!\*)|-(?!-))+")
_DOLLAR = LazyPattern(r"\$(?:[A-Za-z_]\w*)?\$")
_IDENT = LazyPattern(r"[^\W\d][\w$]*")
_TOKENS = LazyPattern(r"[^\W\d][\w$]*|\d+|\x00\d+\x00|\S")
_CLOSING = {"'": "'", '"': '"', "`": "`", "[": "]"}
MAX_LENGTH = 100_000  # characters; a longer statement is not read
HEAD_TOKENS = 64
SELECT_TOKENS = 2_000


def _skeleton(text: str) -> tuple[str, list[str]] | None:
    """The skeleton and the quoted identifiers its placeholders stand for; None where the
    text could be read two ways (see the module docstring)."""
    if len(text) > MAX_LENGTH or "\x00" in text:  # NUL marks the placeholders
        return None
    parts: list[str] = []
    quoted: list[str] = []
    index, end = 0, len(text)
    while index < end:
        plain = _PLAIN.match(text, index)
        if plain is not None:
            parts.append(plain.group())
            index = plain.end()
            continue
        char = text[index]
        if char in _CLOSING:
            closed = _closed(text, index + 1, _CLOSING[char])
            if closed is None:
                return None
            value, index = closed
            if char == "'":
                parts.append(" '' ")
            else:
                parts.append(f" \x00{len(quoted)}\x00 ")
                quoted.append(value)
        elif char == "$":
            tag = _DOLLAR.match(text, index)
            if tag is None:
                parts.append("$")  # $1: a parameter
                index += 1
                continue
            close = text.find(tag.group(), tag.end())
            if close < 0:
                return None
            parts.append(" '' ")
            index = close + len(tag.group())
        elif text.startswith("--", index):
            after = text[index + 2 : index + 3]
            if after and not after.isspace():
                return None  # MySQL reads "--x" as two minus signs, not a comment
            newline = text.find("\n", index)
            index = end if newline < 0 else newline + 1
            parts.append(" ")
        elif text.startswith("/*", index):
            close = text.find("*/", index + 2)
            if close < 0 or text.startswith("/*!", index) or "/*" in text[index + 2 : close]:
                return None  # unterminated, MySQL's executable /*! */, or nested
            index = close + 2
            parts.append(" ")
        elif char == "#":
            return None  # a comment to MySQL, an operator elsewhere
        else:  # "-" or "/" alone
            parts.append(char)
            index += 1
    return "".join(parts), quoted


def _closed(text: str, start: int, closing: str) -> tuple[str, int] | None:
    """The quoted text from ``start`` to ``closing`` (doubled: one of it) and the index
    after it; None if unterminated or if it holds a backslash, which escapes the quote in
    MySQL and not elsewhere."""
    index = start
    while True:
        close = text.find(closing, index)
        if close < 0:
            return None
        if closing != "]" and text.startswith(closing * 2, close):
            index = close + 2
            continue
        value = text[start:close]
        if "\\" in value:
            return None
        return (value if closing == "]" else value.replace(closing * 2, closing)), close + 1


def _token(found: re.Match[str], quoted: list[str]) -> _Token:
    text = found.group()
    if text.startswith("\x00"):
        return _Token(_QUOTED, quoted[int(text[1:-1])])
    if _IDENT.fullmatch(text):
        return _Token(_WORD, text)
    return _Token(_OTHER, text)


def _table(operation: str, words: list[_Token]) -> str | None:
    """The one table the statement names, where its form leaves no doubt."""
    at = 1
    if operation in ("INSERT", "REPLACE"):
        if _word(words, at) == "OR":
            at += 2  # INSERT OR REPLACE (SQLite)
        at = _skip(words, at, {"IGNORE", "LOW_PRIORITY", "DELAYED", "HIGH_PRIORITY"})
        return _name_after(words, at, "INTO")
    if operation == "UPDATE":
        at = _skip(words, at, {"LOW_PRIORITY", "IGNORE", "ONLY"})
        if _word(words, at) == "OR":
            at += 2  # UPDATE OR REPLACE (SQLite)
        name, after = _name(words, at)
        if name is None:
            return None
        if _word(words, after) == "AS":
            after += 1
        if _word(words, after) not in ("SET", "") and words[after].kind == _WORD:
            after += 1  # an alias
        return name if _word(words, after) == "SET" else None
    if operation == "DELETE":
        at = _skip(words, at, {"LOW_PRIORITY", "QUICK", "IGNORE"})
        if _word(words, at) != "FROM":
            return None  # MySQL's multi-table DELETE t1, t2 FROM …
        at = _skip(words, at + 1, {"ONLY"})
        name, after = _name(words, at)
        return name if name is not None and _word(words, after) != "," else None
    if operation in ("CREATE", "DROP", "ALTER", "TRUNCATE"):
        at = _skip(words, at, _TABLE_WORDS)
        if _word(words, at) != "TABLE":
            if operation != "TRUNCATE":
                return None  # an index, a view, a function: not a table
            at -= 1
        at = _skip(words, at + 1, {"IF", "NOT", "EXISTS", "ONLY"})
        name, after = _name(words, at)
        return name if name is not None and _word(words, after) != "," else None
    if operation == "SELECT":
        return _select_table(words)
    return None


def _select_table(words: list[_Token]) -> str | None:
    """``SELECT … FROM t [alias] [WHERE …]``: one FROM, one table, no join, no subquery."""
    uppers = [token.upper for token in words]
    if uppers.count("SELECT") != 1 or uppers.count("FROM") != 1:
        return None
    if {"JOIN", "UNION", "INTERSECT", "EXCEPT", "INTO"} & set(uppers):
        return None
    name, after = _name(words, uppers.index("FROM") + 1)
    if name is None:
        return None
    if _word(words, after) == "AS":
        after += 1
    if after < len(words) and words[after].kind == _WORD and words[after].upper not in _SELECT_ENDS:
        after += 1  # an alias
    if after < len(words) and words[after].upper not in _SELECT_ENDS:
        return None  # a comma (another table), a parenthesis, anything unexpected
    return name


def _skip(words: list[_Token], at: int, optional: set[str] | frozenset[str]) -> int:
    while at < len(words) and words[at].upper in optional:
        at += 1
    return at


def _word(words: list[_Token], at: int) -> str:
    """The token at ``at`` upper-cased if a word, its character if punctuation, else ''."""
    if at >= len(words):
        return ""
    token = words[at]
    return token.upper if token.kind == _WORD else ("" if token.kind == _QUOTED else token.text)


def _name_after(words: list[_Token], at: int, keyword: str) -> str | None:
    if _word(words, at) != keyword:
        return None
    name, _ = _name(words, at + 1)
    return name


def _name(words: list[_Token], at: int) -> tuple[str | None, int]:
    """A table name, dotted parts joined with '.', quotes removed; and the index after it."""
    parts: list[str] = []
    while at < len(words) and words[at].kind in (_WORD, _QUOTED):
        parts.append(words[at].text)
        at += 1
        if _word(words, at) != ".":
            return ".".join(parts), at
        at += 1
    return None, at
