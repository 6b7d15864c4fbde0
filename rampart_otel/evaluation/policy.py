"""Policies: named checks with a polarity, from Python or from a YAML file.

``load_policy`` never evaluates policy text: YAML is read with SafeLoader semantics and
``detect`` strings are built from a whitelisted AST (see ``expression``). Every problem is
a PolicyError located in the file.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from os import PathLike
from typing import TYPE_CHECKING, Any, Literal, get_args

from pydantic_core import ValidationError
from pydantic_core import core_schema as cs

from rampart_otel.channels import channel_key_error, is_channel_key
from rampart_otel.declare import TOOL_SIDE_EFFECTS, ToolSideEffects
from rampart_otel.errors import PolicyError
from rampart_otel.evaluation.evaluators.algebra import Evaluator
from rampart_otel.evaluation.evaluators.side_effect import SideEffectOccurred
from rampart_otel.evaluation.expression import parse_detect
from rampart_otel.evaluation.judge_config import JudgeConfig
from rampart_otel.evaluation.matchers import compared_literals, uses_secret
from rampart_otel.evaluation.validated import (
    field_names,
    optional,
    required,
    schema_of,
    validate,
    validated,
)
from rampart_otel.evaluation.yaml_source import (
    Document,
    boolean_hint,
    compose,
    index_position,
    scalar_locator,
)
from rampart_otel.render import safe_text
from rampart_otel.vocabulary import CHECK_KEYS as _CHECK_KEYS
from rampart_otel.vocabulary import (
    PACK_PREFIX,
    channel_problem,
    declared_kind_problem,
    detail_problem,
    kind_problem,
    names,
    number_detail_problem,
    unknown,
)
from rampart_otel.vocabulary import POLICY_KEYS as _POLICY_KEYS

if TYPE_CHECKING:  # startup: the judge's client and the packs, when a policy uses them
    from rampart_otel.evaluation.judge_endpoint import JudgeClient
    from rampart_otel.evaluation.packs import PackCheck

Polarity = Literal["attack", "probe"]

POLICY_KEYS = names(_POLICY_KEYS)
CHECK_KEYS = names(_CHECK_KEYS)


def _one_line(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty")
    if safe_text(value, None) != value:
        raise ValueError("must be one line without control characters")
    return value


def _channel_key(value: str) -> str:
    if not is_channel_key(value):
        raise ValueError(channel_key_error(value))
    return value


def _kind(value: str) -> str:
    problem = declared_kind_problem(value)
    if problem:
        raise ValueError(problem)
    return value


def _parse_detect(value: Any) -> Any:
    if isinstance(value, str):
        return parse_detect(value)
    if not isinstance(value, Evaluator):
        raise ValueError(
            "detect must be an evaluator expression string, e.g. tool_called('send_email')"
        )
    return value


def _version(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ValueError("version must be an integer or a string")
    return value


def _empty_list(value: Any) -> Any:
    return [] if value is None else value  # `assume_coverage:` with nothing after it


def _no_tools(value: Any) -> Any:
    return {} if value is None else value  # `tools:` with nothing after it


_LABEL = cs.no_info_after_validator_function(_one_line, cs.str_schema())
_OPTIONAL_TEXT = cs.nullable_schema(cs.str_schema())


@validated({"side_effects": required(cs.literal_schema(list(TOOL_SIDE_EFFECTS)))})
@dataclass(frozen=True, kw_only=True)
class ToolDeclaration:
    """What the policy's author promises about one tool: it has no side effects
    (``none``), or every I/O it makes goes through an instrumented client
    (``instrumented``). Either way, a call of it with no I/O span is not silent."""

    side_effects: ToolSideEffects


@validated(
    {
        "id": required(_LABEL),
        "detect": required(
            cs.no_info_before_validator_function(_parse_detect, cs.is_instance_schema(Evaluator))
        ),
        "polarity": required(cs.literal_schema(list(get_args(Polarity)))),
        "harm_category": optional(cs.nullable_schema(_LABEL), None),
        "description": optional(_OPTIONAL_TEXT, None),
    }
)
@dataclass(frozen=True, kw_only=True)
class Check:
    """One named check: ``detect`` describes the harm (attack) or the expected behaviour (probe).

    ``detect`` may be given as an Evaluator or as an expression string, parsed like a file's.
    """

    id: str
    detect: Evaluator
    polarity: Polarity
    harm_category: str | None = None
    description: str | None = None

    @cached_property
    def masks_secrets(self) -> bool:
        """Whether ``detect`` holds a ``secret()`` matcher (its results are masked): read
        once per check, not once per run."""
        return uses_secret(self.detect)


def _known_words(policy: Policy) -> Policy:
    """Every side-effect kind, detail key and assumed channel is one the language knows
    or the policy declares (a Python-built policy's expressions are checked here)."""
    for key in policy.assume_coverage:
        problem = channel_problem(key, policy.side_effect_kinds)
        if problem:
            raise ValueError(f"assume_coverage: {problem}")
    for check in policy.checks:
        for effect in side_effect_evaluators(check.detect):
            problem = kind_problem(effect.kind, policy.side_effect_kinds) or next(
                filter(
                    None,
                    (
                        detail_problem(effect.kind, key)
                        or number_detail_problem(effect.kind, key, compared_literals(matcher))
                        for key, matcher in effect.details
                    ),
                ),
                None,
            )
            if problem:
                raise ValueError(f"check {check.id!r}: {problem}")
    return policy


def _unique_ids(policy: Policy) -> Policy:
    seen: set[str] = set()
    for check in policy.checks:
        if check.id in seen:
            raise ValueError(f"duplicate check id {check.id!r}")
        seen.add(check.id)
    return policy


@validated(
    {
        "name": required(_LABEL),
        "version": optional(
            cs.no_info_before_validator_function(
                _version, cs.union_schema([cs.int_schema(), cs.str_schema()])
            ),
            1,
        ),
        "checks": required(cs.list_schema(schema_of(Check), min_length=1)),
        "assume_coverage": optional(
            cs.no_info_before_validator_function(
                _empty_list,
                cs.list_schema(cs.no_info_after_validator_function(_channel_key, cs.str_schema())),
            ),
            [],
        ),
        "tools": optional(
            cs.no_info_before_validator_function(
                _no_tools, cs.dict_schema(_LABEL, schema_of(ToolDeclaration))
            ),
            {},
        ),
        "side_effect_kinds": optional(
            cs.no_info_before_validator_function(
                _empty_list,
                cs.list_schema(cs.no_info_after_validator_function(_kind, cs.str_schema())),
            ),
            [],
        ),
        "judge": optional(cs.nullable_schema(schema_of(JudgeConfig)), None),
    },
    after=lambda policy: _unique_ids(_known_words(policy)),  # in this order, as before
)
@dataclass(frozen=True, kw_only=True)
class Policy:
    """A named, versioned list of checks, and the channels it takes as observed."""

    name: str
    version: int | str = 1
    checks: list[Check]
    assume_coverage: list[str] = field(default_factory=list)
    tools: dict[str, ToolDeclaration] = field(default_factory=dict)  # by tool name
    # Side-effect kinds of the user's own (``rampart.side_effect.kind`` spans): any detail key.
    side_effect_kinds: list[str] = field(default_factory=list)
    judge: JudgeConfig | None = None  # the endpoint judge(...) asks
    # The client the policy's judge(...) checks share, set by parse_policy.
    _judge_client: JudgeClient | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def judge_client(self) -> JudgeClient | None:
        """The client the policy's judge(...) checks share: its counts go in the report."""
        return self._judge_client

    def check(self, check_id: str) -> Check:
        """The check with ``check_id``; KeyError if there is none."""
        for check in self.checks:
            if check.id == check_id:
                return check
        raise KeyError(check_id)


def side_effect_evaluators(evaluator: Evaluator) -> Iterator[SideEffectOccurred]:
    """Every ``side_effect(...)`` inside ``evaluator``, through &, |, ~ and the evaluators
    that take evaluators (before, flows, at_least, at_most)."""
    if isinstance(evaluator, SideEffectOccurred):
        yield evaluator
        return
    if dataclasses.is_dataclass(evaluator):
        for part in dataclasses.fields(evaluator):
            value = getattr(evaluator, part.name, None)
            if isinstance(value, Evaluator):
                yield from side_effect_evaluators(value)


# --- loading --------------------------------------------------------------------------------

# A policy is a list of checks, not data: YAML is composed in pure Python, and a 50 MB file
# took minutes and gigabytes before its node count was refused.
MAX_POLICY_BYTES = 1 << 20
_TOO_LARGE = "larger than 1 MiB: not a policy file (a trace file given as --policy?)"


def load_policy(path: str | PathLike[str]) -> Policy:
    """Read, validate and build a policy file; raise PolicyError ``FILE:LINE:COL: message``.

    ``builtin:<pack>`` is the built-in pack of that name with its parameters' defaults."""
    source = str(path)
    if source.startswith(PACK_PREFIX):
        return builtin_policy(source)
    try:
        with open(path, "rb") as file:  # no further than a policy can be: not /dev/zero
            raw = file.read(MAX_POLICY_BYTES + 1)
    except OSError as exc:
        raise PolicyError(
            source, None, None, f"cannot read policy file: {exc.strerror or exc}"
        ) from None
    if len(raw) > MAX_POLICY_BYTES:
        raise PolicyError(source, None, None, _TOO_LARGE)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise PolicyError(source, line, column, "not a UTF-8 text file") from None
    return parse_policy(text, source=source)


def parse_policy(text: str, *, source: str = "<policy>") -> Policy:
    """Build a policy from YAML text; ``source`` names it in errors."""
    if len(text) > MAX_POLICY_BYTES:
        raise PolicyError(source, None, None, _TOO_LARGE)
    if "\0" in text:
        raise PolicyError(source, *index_position(text, text.index("\0")), "not a text file")
    document = compose(text, source)
    data = document.value
    if document.root is None:
        raise PolicyError(source, 1, 1, "the policy file is empty")
    if not isinstance(data, dict):
        raise document.error(
            f"a policy must be a mapping with the keys {', '.join(POLICY_KEYS)}", document.root
        )
    if not any(key in POLICY_KEYS for key in data):
        # Not a policy at all (a wrong --policy path): say so without echoing the file.
        raise document.error(
            f"not a policy: a policy is a mapping with the keys {', '.join(POLICY_KEYS)}",
            document.root,
        )
    for key in data:
        if key not in POLICY_KEYS:
            raise document.error(_unknown_key(key, POLICY_KEYS), document.key_nodes[(key,)])
    _check_tools(document, data.get("tools"))
    if isinstance(data.get("judge"), dict):
        _known_keys(document, data["judge"], ("judge",), JUDGE_KEYS)
    declared = _declared_kinds(document, data.get("side_effect_kinds"))
    _check_assumptions(document, data.get("assume_coverage"), declared)
    client = None
    if data.get("judge") is not None:
        from rampart_otel.evaluation.judge_endpoint import JudgeClient  # startup: HTTP, TLS

        try:
            client = JudgeClient(validate(JudgeConfig, data["judge"]))
        except ValidationError as exc:
            raise _located(document, exc, ("judge",)) from None
    included, taken = _included(document, data.get("include"), client)
    checks = data.get("checks")
    if isinstance(checks, list):
        _prepare_checks(document, checks, client, declared, taken)
    fields = {
        ("name" if key == "policy" else key): value
        for key, value in data.items()
        if key != "include"
    }
    if client is not None:
        fields["judge"] = client.config
    if included:
        fields["checks"] = [*included, *_own_checks(document, checks)]
    try:
        policy = validate(Policy, fields)
    except ValidationError as exc:
        raise _located(document, exc) from None
    object.__setattr__(policy, "_judge_client", client)  # frozen: set once, here
    return policy


TOOL_KEYS = field_names(ToolDeclaration)
JUDGE_KEYS = field_names(JudgeConfig)


def _known_keys(
    document: Document, mapping: dict[str, Any], path: tuple[str, ...], allowed: tuple[str, ...]
) -> None:
    """Each key of a nested block one it has, refused where it stands (before the schema,
    which would first report the key the misspelt one was meant to be as missing)."""
    for key in mapping:
        if key not in allowed:
            where = ".".join(safe_text(part, 40) for part in path)
            message = f"{where}: {_unknown_key(key, allowed)}"
            raise document.error(message, document.key_nodes[(*path, key)])


def _check_tools(document: Document, tools: Any) -> None:
    """Each ``tools:`` name a name, each declaration's keys its own."""
    if not isinstance(tools, dict):
        return
    for name, declaration in tools.items():
        if not name.strip() or name != name.strip():
            message = (
                f"tools: the tool name {safe_text(name, 60)!r} has spaces around it"
                if name.strip()
                else "tools: a tool name must not be empty"
            )
            raise document.error(message, document.key_nodes[("tools", name)])
        if isinstance(declaration, dict):
            _known_keys(document, declaration, ("tools", name), TOOL_KEYS)


def _declared_kinds(document: Document, kinds: Any) -> list[str]:
    """The policy's own side-effect kinds; a bad one is refused where it stands."""
    if kinds is None:
        return []
    if not isinstance(kinds, list):
        node = document.nodes[("side_effect_kinds",)]
        raise document.error("side_effect_kinds: a list of kind names, e.g. [payment]", node)
    for index, kind in enumerate(kinds):
        problem = declared_kind_problem(kind)
        if problem:
            node = document.nodes[("side_effect_kinds", index)]
            raise document.error(f"side_effect_kinds[{index}]: {problem}", node)
    return list(kinds)


def _check_assumptions(document: Document, keys: Any, declared: list[str]) -> None:
    """Each ``assume_coverage`` key a channel the policy can have, refused where it stands."""
    if not isinstance(keys, list):
        return
    for index, key in enumerate(keys):
        problem = channel_problem(key, declared)
        if problem:
            node = document.nodes[("assume_coverage", index)]
            raise document.error(f"assume_coverage[{index}]: {problem}", node)


def _prepare_checks(
    document: Document,
    checks: list[Any],
    judge: JudgeClient | None,
    declared: list[str],
    taken: dict[str, int],
) -> None:
    """Parse each ``detect`` where it stands and reject repeated ids, before the schema.
    ``taken``: the ids the included packs brought, with the line of their ``include``."""
    seen: dict[str, int] = dict(taken)
    nodes: dict[int, int] = {}  # id() of each check's node -> its index: an alias repeats one
    for index, check in enumerate(checks):
        if not isinstance(check, dict):
            continue
        path = ("checks", index)
        node = document.nodes[path]
        if id(node) in nodes:
            first = nodes[id(node)]
            message = (
                f"duplicate check id {check.get('id')!r}: checks[{index}] is a YAML alias of "
                f"checks[{first}] (line {node.start_mark.line + 1})"
            )
            raise document.error(message, document.nodes.get((*path, "id"), node))
        nodes[id(node)] = index
        for key in check:
            if key not in CHECK_KEYS:
                raise document.error(
                    _unknown_key(key, CHECK_KEYS), document.key_nodes[(*path, key)]
                )
        check_id = check.get("id")
        if isinstance(check_id, str):
            id_node = document.nodes[(*path, "id")]
            if check_id in seen:
                message = f"duplicate check id {check_id!r} (first at line {seen[check_id]})"
                raise document.error(message, id_node)
            seen[check_id] = id_node.start_mark.line + 1
        detect = check.get("detect")
        if isinstance(detect, str):
            node = document.nodes[(*path, "detect")]
            locate = scalar_locator(document.text, node)  # type: ignore[arg-type]
            check["detect"] = parse_detect(
                detect,
                source=document.source,
                locate=locate,
                judge=judge,
                side_effect_kinds=declared,
            )


def _own_checks(document: Document, checks: Any) -> list[Check]:
    """The policy's own checks, each validated where it stands (beside included checks the
    policy's ``checks[i]`` is no longer the i-th check of the whole)."""
    if checks is None:
        return []
    if not isinstance(checks, list):
        raise document.error("checks: a list of checks", document.nodes[("checks",)])
    built = []
    for index, check in enumerate(checks):
        try:
            built.append(validate(Check, check))
        except ValidationError as exc:
            raise _located(document, exc, ("checks", index)) from None
    return built


INCLUDE_KEYS = ("pack", "with")


def _included(
    document: Document, entries: Any, judge: JudgeClient | None
) -> tuple[list[Check], dict[str, int]]:
    """The checks of the packs ``include`` names, with their parameters checked where they
    stand; and each check id with the line of the include that brought it."""
    if entries is None:
        return [], {}
    from rampart_otel.evaluation.packs import expand, members, pack_of, reference_problem

    if not isinstance(entries, list):
        message = "include: a list of packs, e.g. [builtin:agent-baseline]"
        raise document.error(message, document.nodes[("include",)])
    checks: list[Check] = []
    taken: dict[str, int] = {}
    by: dict[str, tuple[str, int]] = {}  # pack name -> the include that brought it
    for index, entry in enumerate(entries):
        path: tuple[str | int, ...] = ("include", index)
        node = document.nodes[path]
        line = node.start_mark.line + 1
        values: Any = {}
        if isinstance(entry, dict):
            for key in entry:
                if key not in INCLUDE_KEYS:
                    problem = unknown("key", safe_text(key, 40), INCLUDE_KEYS)
                    raise document.error(
                        f"include[{index}]: {problem}", document.key_nodes[(*path, key)]
                    )
            if "pack" not in entry:
                raise document.error(f"include[{index}]: missing required key 'pack'", node)
            reference, values = entry["pack"], entry.get("with") or {}
            reference_node = document.nodes[(*path, "pack")]
            if not isinstance(values, dict):
                message = f"include[{index}].with: a mapping of parameter: value"
                raise document.error(message, document.nodes[(*path, "with")])
        elif isinstance(entry, str):
            reference, reference_node = entry, node
        else:
            message = (
                f"include[{index}]: a pack, builtin:<name>, or {{pack: builtin:<name>, "
                "with: {parameter: value}}"
            )
            raise document.error(message, node)
        refused = reference_problem(reference)
        if refused:
            raise document.error(f"include[{index}]: {refused}", reference_node)
        pack = pack_of(reference)
        for member in members(pack):
            if member.name in by:
                first, first_line = by[member.name]
                message = (
                    f"include[{index}]: pack {member.reference!r} is already included by "
                    f"{first} (line {first_line})"
                )
                raise document.error(message, reference_node)
            by[member.name] = (reference, line)
        chosen: dict[str, Any] = {}
        for name, value in values.items():
            where = (*path, "with", name)
            if name not in pack.parameters:
                problem = unknown("parameter", safe_text(name, 40), pack.parameters)
                problem = problem.replace(" — ", f" of {reference} — ", 1).replace(
                    "; expected", f" of {reference}; expected", 1
                )
                raise document.error(f"include[{index}].with: {problem}", document.key_nodes[where])
            try:
                chosen[name] = pack.parameters[name].check(value)
            except ValueError as exc:
                raise document.error(
                    f"include[{index}].with.{name}: {exc}", document.nodes[where]
                ) from None
        expansion = expand(pack, chosen).checks
        if not expansion:
            raise document.error(f"include[{index}]: {_brings_nothing(reference)}", reference_node)
        for check, detect in expansion:
            try:
                checks.append(_pack_check(reference, check, detect, judge))
            except PolicyError as exc:
                place = document.key_nodes.get(
                    (*path, "with", check.requires or ""), reference_node
                )
                raise document.error(
                    f"include[{index}]: {check.id}: {exc.message}", place
                ) from None
            taken[check.id] = line
    return checks, taken


def _pack_check(reference: str, check: PackCheck, detect: str, judge: JudgeClient | None) -> Check:
    fields = {  # read from the pack's file: validated as a policy file's check is
        "id": check.id,
        "polarity": check.polarity,
        "harm_category": check.harm_category,
        "description": check.description,
        "detect": parse_detect(detect, source=reference, judge=judge),
    }
    return validate(Check, fields)


def builtin_policy(reference: str) -> Policy:
    """The built-in pack ``builtin:<name>`` as a policy of its own, every parameter at its
    default; its version is rampart-otel's, which ships the pack."""
    from rampart_otel import __version__
    from rampart_otel.evaluation.packs import expand, pack_of, reference_problem

    problem = reference_problem(reference)
    if problem:
        raise PolicyError(reference, None, None, problem)
    pack = pack_of(reference)
    checks = [
        _pack_check(reference, check, detect, None) for check, detect in expand(pack, {}).checks
    ]
    if not checks:
        raise PolicyError(reference, None, None, _brings_nothing(reference))
    return Policy(name=reference, version=__version__, checks=checks)


def _brings_nothing(reference: str) -> str:
    """Why a pack taken with these parameters brings no check: the parameters its checks
    require, and how to set one."""
    from rampart_otel.evaluation.packs import members, pack_of

    pack = pack_of(reference)
    needed = sorted({c.requires for m in members(pack) for c in m.checks if c.requires})
    if not needed:
        return f"{reference} brings no check"
    parameter = pack.parameters.get(needed[0])
    example = "[...]" if parameter is not None and parameter.type == "names" else "..."
    return (
        f"{reference} brings no check unless {' or '.join(needed)} is set "
        f"({{pack: {reference}, with: {{{needed[0]}: {example}}}}})"
    )


def _unknown_key(key: str, allowed: tuple[str, ...]) -> str:
    return unknown("key", safe_text(key, 40), allowed)


def _located(
    document: Document, exc: ValidationError, prefix: tuple[str | int, ...] = ()
) -> PolicyError:
    """The first schema error, at the YAML node it is about (``prefix``: where the model
    that failed sits in the file)."""
    error = exc.errors(include_url=False)[0]
    loc = (*prefix, *error["loc"])
    path = tuple("policy" if i == 0 and part == "name" else part for i, part in enumerate(loc))
    where = ".".join(str(part) if isinstance(part, str) else f"[{part}]" for part in path)
    where = where.replace(".[", "[")
    message = error["msg"]
    context = error.get("ctx") or {}
    if isinstance(context.get("error"), Exception):
        message = str(context["error"])
    if error["type"] == "missing":
        parent = document.nearest(path[:-1])
        return document.error(f"missing required key {path[-1]!r}", parent)
    node = document.nearest(path)
    if error["type"] == "string_type":
        message += boolean_hint(node, error.get("input"))
    if error["type"] == "too_short" and path == ("checks",):
        message = "a policy needs at least one check"
    if error["type"] == "literal_error" and isinstance(error.get("input"), str):
        # "Input should be 'attack' or 'probe'": the word, and the one it was meant to be
        allowed = tuple(re.findall(r"'([^']*)'", str(context.get("expected", ""))))
        message = unknown("value", safe_text(error["input"], 40), allowed)
    return document.error(f"{where}: {message}" if where else message, node)
