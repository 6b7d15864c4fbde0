"""The policy language's words, in one place: validation, the editor schema and the tables
of docs/policy.md are all made from these.

The side-effect kinds the conventions report and each kind's detail keys, the channel keys,
the keys of a policy file and of a check, the polarities, the evaluator and matcher names
and the values of ``judge(over=...)``. A word a policy uses that is not here (nor declared
by the policy, for a side-effect kind of its own) is refused with the closest known words
(``unknown side-effect kind 'http' — did you mean 'http_request'?``).

``python -m rampart_otel.vocabulary`` prints the tables docs/policy.md holds between its
``vocabulary`` markers; ``docs/generate_policy_reference.py`` rewrites them there.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass

from rampart_otel.channels import (
    CHANNEL_KEYS_CORE,
    SIDE_EFFECT_PREFIX,
    channel_key_error,
    is_channel_key,
    is_side_effect_kind,
)


@dataclass(frozen=True, slots=True)
class Word:
    """A word of the language and what it means, for errors, the schema and the docs."""

    name: str
    meaning: str


@dataclass(frozen=True, slots=True)
class Key(Word):
    """A key of a policy file or of a check."""

    required: str = "no"  # how the docs say it: "yes", "no, default `1`", ...


@dataclass(frozen=True, slots=True)
class Kind(Word):
    """A side-effect kind a convention reports, and the details it fills in."""

    details: tuple[Word, ...] = ()
    spans: str = ""  # the spans it is read from

    @property
    def detail_keys(self) -> tuple[str, ...]:
        return tuple(detail.name for detail in self.details)


# --- side effects ----------------------------------------------------------------------------

HTTP_REQUEST = "http_request"
DB_QUERY = "db_query"
MESSAGE_PUBLISH = "message_publish"
RPC_CALL = "rpc_call"
PROCESS_EXEC = "process_exec"
MCP_REQUEST = "mcp_request"
NETWORK_CONNECT = "network_connect"
FILE_WRITE = "file_write"

_SYSTEM = "the system's name as the span gives it"
SIDE_EFFECT_KINDS: tuple[Kind, ...] = (
    Kind(
        HTTP_REQUEST,
        "an HTTP request the agent's process sent",
        (
            Word("method", "`GET`, `POST`, ..."),
            Word("url", "the full URL"),
            Word("host", "the server's host name, lower case"),
            Word("port", "the server's port (from the URL's scheme when not recorded)"),
            Word("path", "the URL's path (from the URL when not recorded)"),
            Word("status_code", "the response's status code"),
            Word(
                "body",
                "the request body as text, where something recorded it (the watcher, "
                "`rampart_otel.watch`; HTTP instrumentations record no body)",
            ),
        ),
        "CLIENT spans with `http.request.method` (or `http.method`)",
    ),
    Kind(
        DB_QUERY,
        "a database call",
        (
            Word("system", f"{_SYSTEM}: `postgresql`, `sqlite`, ..."),
            Word("statement", "the query text"),
            Word("operation", "`SELECT`, `INSERT`, ...; `prepare` for a statement only prepared"),
            Word("collection", "the table or collection"),
            Word("namespace", "the database"),
        ),
        "spans with `db.system.name` (or `db.system`)",
    ),
    Kind(
        MESSAGE_PUBLISH,
        "a message sent to a queue or topic",
        (
            Word("system", f"{_SYSTEM}: `kafka`, `rabbitmq`, ..."),
            Word("destination", "the queue or topic"),
            Word("operation", "`publish`, `send` or `create`"),
        ),
        "messaging spans that publish, send or create",
    ),
    Kind(
        RPC_CALL,
        "a remote procedure call the agent's process made",
        (
            Word("system", f"{_SYSTEM}: `grpc`, ..."),
            Word("service", "the service called"),
            Word("method", "the method called"),
        ),
        "CLIENT spans with `rpc.system.name` (or `rpc.system`)",
    ),
    Kind(
        PROCESS_EXEC,
        "a process the agent ran",
        (
            Word("executable", "the program's name or path"),
            Word("args", "the command line, as a list"),
            Word("exit_code", "the exit code"),
        ),
        "spans with `process.executable.*` or `process.command_*`; Claude Code's Bash tool",
    ),
    Kind(
        MCP_REQUEST,
        "an MCP request other than a tool call (`resources/read`, `prompts/get`, ...)",
        (
            Word("method", "the MCP method"),
            Word("target", "the resource or prompt it names"),
        ),
        "MCP client spans (`mcp.method.name`, OpenLLMetry's `<method>.mcp`)",
    ),
    Kind(
        NETWORK_CONNECT,
        "an outbound connection (or datagram) the agent's process opened, whatever its client",
        (
            Word("host", "the host name resolved to the address, else the address; lower case"),
            Word("address", "the peer's IP address (or unix socket path)"),
            Word("port", "the peer's port"),
            Word("transport", "`tcp`, `udp` or `unix`"),
        ),
        "the watcher's `socket.connect` spans (`rampart_otel.watch`, docs/watch.md)",
    ),
    Kind(
        FILE_WRITE,
        "a file the agent's process opened for writing, removed, renamed or created",
        (
            Word("path", "the file's absolute path"),
            Word(
                "mode",
                "the open mode (`w`, `a`, `r+`, `O_WRONLY|O_CREAT`, ...), or the operation "
                "(`remove`, `rename`, `mkdir`, `rmtree`, ...)",
            ),
        ),
        "the watcher's `open` (for writing) and file operation spans (`rampart_otel.watch`)",
    ),
)
STANDARD_KINDS: tuple[str, ...] = tuple(kind.name for kind in SIDE_EFFECT_KINDS)
_KINDS = {kind.name: kind for kind in SIDE_EFFECT_KINDS}


# Details the readers record as whole numbers (conventions.side_effects reads them with
# ``_int``): a text literal never equals one.
NUMBER_DETAILS: frozenset[tuple[str, str]] = frozenset(
    {
        (HTTP_REQUEST, "port"),
        (HTTP_REQUEST, "status_code"),
        (PROCESS_EXEC, "exit_code"),
        (NETWORK_CONNECT, "port"),
    }
)


# Details read as a list of texts: a single text never equals one.
LIST_DETAILS: frozenset[tuple[str, str]] = frozenset({(PROCESS_EXEC, "args")})
# Details in one letter case: HTTP methods as the semantic conventions write them, host
# names as the readers write them (lower-cased). A text in another case never equals one.
CASED_DETAILS: dict[tuple[str, str], tuple[str, str]] = {
    (HTTP_REQUEST, "method"): ("upper", "HTTP"),
    (HTTP_REQUEST, "host"): ("lower", "the readers"),
    (NETWORK_CONNECT, "host"): ("lower", "the readers"),
}


def number_detail_problem(kind: str, key: str, literals: Iterable[object]) -> str | None:
    """Why a literal among ``literals`` (what an equality, one_of or not_in compares a
    detail with) can never equal detail ``key`` of ``kind``: a text for a number, a single
    value for a list; or None."""
    if (kind, key) in LIST_DETAILS:
        for literal in literals:
            if not isinstance(literal, (list, tuple)):
                return (
                    f"side-effect detail {key!r} is a list, not {_shown(str(literal))}: match "
                    "an item with contains(...) or regex(...), or the whole list with a list"
                )
        return None
    if (kind, key) in CASED_DETAILS:
        case, writer = CASED_DETAILS[(kind, key)]
        for literal in literals:
            if not isinstance(literal, str):
                continue
            meant = literal.upper() if case == "upper" else literal.lower()
            if literal != meant:
                return (
                    f"side-effect detail {key!r} is {case} case, as {writer} write"
                    f"{'s' if writer == 'HTTP' else ''} it: {_shown(literal)} never equals it "
                    f"— did you mean {_shown(meant)}?"
                )
        return None
    if (kind, key) not in NUMBER_DETAILS:
        return None
    for literal in literals:
        if isinstance(literal, str):
            if literal.strip().lstrip("+-").isdigit():
                return (
                    f"side-effect detail {key!r} is a number: write {int(literal)}, "
                    f"not {_shown(literal)}"
                )
            return f"side-effect detail {key!r} is a number, not a text like {_shown(literal)}"
    return None


def detail_keys(kind: str) -> tuple[str, ...] | None:
    """The detail keys of a standard kind; None for a kind of the user's own (any key)."""
    found = _KINDS.get(kind)
    return None if found is None else found.detail_keys


# --- channels --------------------------------------------------------------------------------

CHANNELS: tuple[Word, ...] = (
    Word("input", "what the user (the agent's caller) sent into the run"),
    Word("tool_calls", "the tool calls the agent made"),
    Word("tool_calls.arguments", "the calls' arguments"),
    Word("tool_calls.results", "the calls' results"),
    Word("response", "the agent's answers"),
    Word(f"{SIDE_EFFECT_PREFIX}<kind>", "the side effects of one kind"),
)


def channel_keys(kinds: Iterable[str] = STANDARD_KINDS) -> tuple[str, ...]:
    """Every channel key, with ``side_effects.<kind>`` for each of ``kinds``."""
    return (*CHANNEL_KEYS_CORE, *(SIDE_EFFECT_PREFIX + kind for kind in kinds))


# --- policy files ----------------------------------------------------------------------------

# Adding a top-level key is one line here (and its field on ``Policy``, its schema in
# ``evaluation.policy_schema``).
# A policy path or include naming a built-in pack: ``builtin:<pack>`` (``evaluation.packs``).
PACK_PREFIX = "builtin:"

POLICY_KEYS: tuple[Key, ...] = (
    Key("policy", "the policy's name (one line)", "yes"),
    Key("version", "an integer or a string, reported with the results", "no, default `1`"),
    Key("assume_coverage", "channel keys taken as observed, see below", "no, default `[]`"),
    Key(
        "side_effect_kinds",
        "side-effect kinds of your own (reported with `rampart.side_effect.kind`), see below",
        "no, default `[]`",
    ),
    Key(
        "tools",
        "per tool name, `{side_effects: none}` (a pure tool) or `{side_effects: instrumented}` "
        "(all its I/O is traced): a call of it with no I/O span is then not *silent*, see "
        "[`tools`](#tools-declaring-a-tools-side-effects)",
        "no, default `{}`",
    ),
    Key(
        "judge",
        "the judge's OpenAI-compatible endpoint, see "
        "[LLM-judged checks](#llm-judged-checks-judgequestion-over)",
        "only for `judge(...)`",
    ),
    Key(
        "include",
        "built-in policy packs whose checks the policy takes: `builtin:<pack>`, or "
        "`{pack: builtin:<pack>, with: {<parameter>: <value>, ...}}`, see "
        "[Policy packs](#policy-packs-include)",
        "no, default `[]`",
    ),
    Key(
        "checks",
        "the checks, in report order (after the included packs' checks)",
        "yes, at least one, unless `include` brings some",
    ),
)
CHECK_KEYS: tuple[Key, ...] = (
    Key("id", "unique within the policy, one line", "yes"),
    Key("polarity", "`attack` or `probe`", "yes"),
    Key("detect", "the expression, a string (see below)", "yes"),
    Key(
        "harm_category",
        "groups results in the population summary (`uncategorized` if absent)",
    ),
    Key("description", "free text for humans"),
)
POLARITIES: tuple[Word, ...] = (
    Word("attack", "`detect` describes the harm: DETECTED is unsafe"),
    Word("probe", "`detect` describes the expected behaviour: NOT_DETECTED is unsafe"),
)

# --- expressions -----------------------------------------------------------------------------

EVALUATORS: tuple[Word, ...] = (
    Word("tool_called", "a tool call whose name and arguments match"),
    Word("tool_result", "a tool call whose result matches"),
    Word("side_effect", "a side effect of one kind whose details match"),
    Word("response_contains", "the agent's answer contains a text"),
    Word("input_contains", "the user's input contains a text"),
    Word("before", "one event happened before another"),
    Word("flows", "a value from one event reached another"),
    Word("at_least", "an event happened at least n times"),
    Word("at_most", "an event happened at most n times"),
    Word("repeated", "the same tool call (name and arguments) was made n times or more"),
    Word("judge", "a model answers a question about the run"),
)
MATCHERS: tuple[Word, ...] = (
    Word("regex", "has an RE2 match anywhere"),
    Word("glob", "matches a shell-style pattern as a whole"),
    Word("contains", "contains a substring, list item or mapping key"),
    Word("one_of", "equals one of the values"),
    Word("not_in", "is present and equals none of the values"),
    Word("not_", "does not match the matcher"),
    Word("ip_in", "is a host that is an IP address in one of the ranges"),
    Word("path_under", "is an absolute path inside a directory"),
    Word("secret", "holds a credential of a known format"),
)
JUDGE_OVER: tuple[Word, ...] = (
    Word("response", "the agent's final response"),
    Word("input", "what the user sent to the agent"),
    Word("tool_calls", "the tool calls, with their arguments"),
    Word("tool_results", "the tool calls' results"),
    Word("run", "a transcript: input, tool calls and results, response"),
)


def names(words: Iterable[Word]) -> tuple[str, ...]:
    return tuple(word.name for word in words)


# --- checking words ---------------------------------------------------------------------------


def closest(word: str, known: Iterable[str], count: int = 3) -> list[str]:
    """The known words nearest ``word``: those it is part of (or that are part of it), else
    difflib's closest; case-insensitive."""
    import difflib  # startup: only for a word not known

    known = list(dict.fromkeys(known))
    lowered = word.lower()

    def ratio(candidate: str) -> float:
        return difflib.SequenceMatcher(None, lowered, candidate.lower()).ratio()

    if len(lowered) >= 2:
        within = [c for c in known if lowered in c.lower() or c.lower() in lowered]
        if within:
            return sorted(within, key=ratio, reverse=True)[:count]
    by_lower = {candidate.lower(): candidate for candidate in known}
    near = [by_lower[c] for c in difflib.get_close_matches(lowered, list(by_lower), count, 0.6)]
    return sorted(near, key=lambda candidate: (-ratio(candidate), candidate))


def unknown(what: str, word: str, known: Collection[str], hint: str = "") -> str:
    """``unknown <what> 'word' — did you mean 'x'?``, or the known words when none is close."""
    near = closest(word, known)
    if near:
        return f"unknown {what} {_shown(word)} — did you mean {_either(near)}?"
    listed = ", ".join(known)
    return f"unknown {what} {_shown(word)}; expected one of: {listed}" + (
        f" ({hint})" if hint else ""
    )


def _shown(word: str) -> str:
    return repr(word if len(word) <= 60 else word[:59] + "…")


def _either(words: list[str]) -> str:
    quoted = [repr(word) for word in words]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"


DECLARE_HINT = "a kind of your own: list it under side_effect_kinds"


def kind_problem(kind: str, declared: Collection[str]) -> str | None:
    """Why ``kind`` cannot be used by a policy that declares ``declared`` kinds, or None."""
    if kind in _KINDS or kind in declared:
        return None
    return unknown("side-effect kind", kind, [*STANDARD_KINDS, *declared], DECLARE_HINT)


def detail_problem(kind: str, key: str) -> str | None:
    """Why ``key`` is not a detail of ``kind``, or None (any key for a kind of one's own)."""
    keys = detail_keys(kind)
    if keys is None or key in keys:
        return None
    near = closest(key, keys)
    shown = f"unknown detail key {_shown(key)} for side-effect kind {kind!r}"
    if near:
        return f"{shown} — did you mean {_either(near)}?"
    return f"{shown}; its details are: {', '.join(keys)}"


def channel_problem(key: object, declared: Collection[str]) -> str | None:
    """Why ``key`` is not a channel of a policy that declares ``declared`` kinds, or None."""
    kinds = [*STANDARD_KINDS, *declared]
    known = channel_keys(kinds)
    if isinstance(key, str) and key in known:
        return None
    if not isinstance(key, str):
        return channel_key_error(key)
    if key.startswith(SIDE_EFFECT_PREFIX):
        kind = key[len(SIDE_EFFECT_PREFIX) :]
        near = [SIDE_EFFECT_PREFIX + k for k in closest(kind, kinds)]
    else:
        near = closest(key, known)
    what = "unknown channel" if is_channel_key(key) else "invalid channel key"
    if near:
        return f"{what} {_shown(key)} — did you mean {_either(near)}?"
    if is_channel_key(key):  # side_effects.<an unknown identifier>
        return (
            f"{what} {_shown(key)}: the side-effect kinds are {', '.join(kinds)} ({DECLARE_HINT})"
        )
    return channel_key_error(key)


def declared_kind_problem(kind: object) -> str | None:
    """Why ``kind`` cannot be declared in ``side_effect_kinds``, or None.

    A standard kind, or one misspelt (``http_requests``), is refused: declared, the slip
    would name a channel no span feeds, and an assumed or declared coverage of it would make
    every check on it SAFE."""
    if not isinstance(kind, str) or not is_side_effect_kind(kind):
        return f"a side-effect kind is an identifier such as 'payment', not {kind!r}"
    if kind in _KINDS:
        return f"{kind!r} is a standard kind: use it without declaring it"
    slipped = [standard for standard in STANDARD_KINDS if _slip_of(kind, standard)]
    if slipped:
        return (
            f"{kind!r} is the standard kind {slipped[0]!r} misspelt — did you mean "
            f"{_either(slipped)}? (a kind of your own needs a name of its own)"
        )
    return None


def _slip_of(word: str, standard: str) -> bool:
    """Whether ``word`` is ``standard`` with a typist's slip: another case or separator, a
    plural or past-tense ending, one letter changed, dropped or doubled, two swapped."""

    def squashed(text: str) -> str:
        return "".join(char for char in text.lower() if char.isalnum())

    a, b = squashed(word), squashed(standard)
    endings = (b + "s", b + "es", b + "d", b + "ed", b[:-1] + "ies" if b.endswith("y") else b)
    if a == b or a in endings:
        return True
    if len(a) == len(b):
        diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
        swapped = len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]]
        return len(diff) == 1 or (swapped and a[diff[1]] == b[diff[0]])
    if len(a) == len(b) - 1:
        return any(b[:i] + b[i + 1 :] == a for i in range(len(b)))
    if len(a) == len(b) + 1:  # a doubled letter
        return any(a[:i] + a[i + 1 :] == b and a[i] == a[i - 1] for i in range(1, len(a)))
    return False


# --- docs -------------------------------------------------------------------------------------


def markdown_tables() -> str:
    """The vocabulary tables of docs/policy.md (between its ``vocabulary`` markers)."""
    lines = ["Top level (no other keys are allowed):", "", *_table(("key", "required", "meaning"))]
    lines += [f"| `{key.name}` | {key.required} | {key.meaning} |" for key in POLICY_KEYS]
    lines += ["", "Each check (no other keys are allowed):", ""]
    lines += _table(("key", "required", "meaning"))
    lines += [f"| `{key.name}` | {key.required} | {key.meaning} |" for key in CHECK_KEYS]
    lines += ["", "Polarities:", "", *_table(("polarity", "meaning"))]
    lines += [f"| `{word.name}` | {word.meaning} |" for word in POLARITIES]
    lines += ["", "Side-effect kinds and their details (`side_effect(kind, detail=...)`):", ""]
    lines += _table(("kind", "what", "details", "read from"))
    for kind in SIDE_EFFECT_KINDS:
        details = "<br>".join(f"`{word.name}`: {word.meaning}" for word in kind.details)
        lines.append(f"| `{kind.name}` | {kind.meaning} | {details} | {kind.spans} |")
    lines += ["", "Channel keys (`assume_coverage`, `--assume-coverage`):", ""]
    lines += _table(("channel key", "what it holds"))
    lines += [f"| `{word.name}` | {word.meaning} |" for word in CHANNELS]
    lines += ["", "Evaluators and matchers (the only functions `detect` may call):", ""]
    lines += _table(("evaluator", "DETECTED when"))
    lines += [f"| `{word.name}` | {word.meaning} |" for word in EVALUATORS]
    lines += ["", *_table(("matcher", "matches when the value"))]
    lines += [f"| `{word.name}` | {word.meaning} |" for word in MATCHERS]
    lines += ["", "`judge(question, over=...)` reads:", ""]
    lines += _table(("over", "what the judge reads"))
    lines += [f"| `{word.name}` | {word.meaning} |" for word in JUDGE_OVER]
    return "\n".join(lines) + "\n"


def _table(headers: tuple[str, ...]) -> list[str]:
    return ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]


if __name__ == "__main__":
    print(markdown_tables(), end="")
