"""What a recorded SQL statement says of itself: its operation, and the table it writes.

Instrumentations such as ``opentelemetry-instrumentation-sqlite3`` record ``db.statement``
and no ``db.operation.name``; the operation is the statement's first keyword, as the
instrumentations that record it read it. Only an unambiguous answer is given: a statement
this reader cannot read without guessing (several statements, ``WITH …`` whose body may
write, ``EXPLAIN``, which may run the statement it explains, a comment or quote whose end
the dialects disagree on) gives nothing, and a check on the operation stays UNDETERMINED.

Only dialects that end every statement with ``;`` are read (T-SQL runs ``SELECT 1 DELETE
FROM t`` as two statements without one).
"""

from __future__ import annotations

from dataclasses import dataclass

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
    kind: str  # _WORD, _QUOTED or _OTHER
    text: str  # a word as written, a quoted identifier without its quotes, or one character

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
    tokens = _tokens(statement)
    if not tokens:
        return UNREAD
    statements = _split(tokens)
    if len(statements) != 1:
        return UNREAD
    (words,) = statements
    operation = words[0].upper
    if operation not in OPERATIONS:
        return UNREAD
    return StatementSummary(operation, _table(operation, words))


def _split(tokens: list[_Token]) -> list[list[_Token]]:
    """The statements between semicolons, empty ones left out."""
    parts: list[list[_Token]] = [[]]
    for token in tokens:
        if token.kind == _OTHER and token.text == ";":
            parts.append([])
        else:
            parts[-1].append(token)
    return [part for part in parts if part]


def _tokens(text: str) -> list[_Token] | None:
    """Words, quoted identifiers and punctuation outside comments and string literals;
    None where the text could be read two ways (see the module docstring)."""
    tokens: list[_Token] = []
    index, end = 0, len(text)
    while index < end:
        char = text[index]
        if char.isspace():
            index += 1
        elif text.startswith("--", index):
            after = text[index + 2 : index + 3]
            if after and not after.isspace():
                return None  # MySQL reads "--x" as two minus signs, not a comment
            newline = text.find("\n", index)
            index = end if newline < 0 else newline + 1
        elif text.startswith("/*", index):
            close = text.find("*/", index + 2)
            body = text[index + 2 : close]
            if close < 0 or body.startswith(("!", "+")) or "/*" in body:
                return None  # unterminated, MySQL's executable /*! */, or nesting
            index = close + 2
        elif char == "#":
            return None  # a comment to MySQL, an operator elsewhere
        elif char in "'\"`[":
            closing = "]" if char == "[" else char
            found = _quoted(text, index + 1, closing)
            if found is None:
                return None
            value, index = found
            tokens.append(_Token(_OTHER if char == "'" else _QUOTED, value if char != "'" else "'"))
        elif char == "$" and (tag := _dollar_tag(text, index)) is not None:
            close = text.find(tag, index + len(tag))
            if close < 0:
                return None
            tokens.append(_Token(_OTHER, "'"))
            index = close + len(tag)
        elif char.isalpha() or char == "_":
            start = index
            while index < end and (text[index].isalnum() or text[index] in "_$"):
                index += 1
            tokens.append(_Token(_WORD, text[start:index]))
        else:
            tokens.append(_Token(_OTHER, char))
            index += 1
    return tokens


def _quoted(text: str, start: int, closing: str) -> tuple[str, int] | None:
    """The quoted text from ``start`` up to ``closing`` (doubled: one of it), and the index
    after it; None if unterminated or if it holds a backslash, which escapes the quote in
    MySQL and not elsewhere."""
    parts: list[str] = []
    index = start
    while True:
        close = text.find(closing, index)
        if close < 0:
            return None
        parts.append(text[index:close])
        if text.startswith(closing * 2, close) and closing != "]":
            parts.append(closing)
            index = close + 2
            continue
        value = "".join(parts)
        return None if "\\" in value else (value, close + 1)


def _dollar_tag(text: str, index: int) -> str | None:
    """``$$`` or ``$tag$`` opening a PostgreSQL dollar-quoted string at ``index``."""
    close = text.find("$", index + 1)
    if close < 0:
        return None
    tag = text[index + 1 : close]
    if tag and not (tag[0].isalpha() or tag[0] == "_"):
        return None  # $1: a parameter
    if not all(c.isalnum() or c == "_" for c in tag):
        return None
    return text[index : close + 1]


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
