"""Built-in policy packs: checks for the agent threats people fear most, shipped with the
package and referenced by name (``builtin:egress``), from a policy's ``include:`` or in place
of a policy file (``--policy builtin:agent-baseline``).

A pack is a YAML file beside this module: its parameters (each with a type, a default and a
meaning) and its checks, whose ``detect`` may name a parameter as ``{{name}}``. A parameter's
value is checked against its type and written into the expression as a literal, so it is
parsed with the rest of the expression and can never add code to it. A pack may be made of
other packs (``include:``): its parameters are theirs.

A parameter can only widen what a check looks at or name what is allowed: an unknown name,
a value of the wrong type, a URL where a host is due, all refuse the policy, so no typo can
make a check SAFE.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from rampart_otel.errors import PolicyError
from rampart_otel.evaluation.yaml_source import compose
from rampart_otel.lazy_regex import LazyPattern
from rampart_otel.vocabulary import PACK_PREFIX as PREFIX
from rampart_otel.vocabulary import unknown

PACK_KEYS = ("pack", "version", "description", "parameters", "include", "defaults", "checks")
PARAMETER_KEYS = ("type", "default", "description")
CHECK_KEYS = ("id", "polarity", "harm_category", "description", "owasp", "requires", "detect")
# ``{{name}}``: the value as a literal; ``{{+name}}``: a list's items, each after a comma, to
# extend a list literal of the pack's own (nothing for an empty list).
_PLACEHOLDER = LazyPattern(r"\{\{\s*(\+?)([a-z_][a-z0-9_]*)\s*\}\}")
_HOST = LazyPattern(r"^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.?)+$|^\[?[0-9a-f:.]+\]?$")


# --- parameter types ------------------------------------------------------------------------


def _hosts(value: Any) -> Any:
    if not isinstance(value, list):
        raise ValueError("a list of host names, e.g. [api.openai.com, 10.0.0.7]")
    hosts = []
    for index, item in enumerate(value):
        if not isinstance(item, str) or not item.strip():
            raise ValueError(f"[{index}]: a host name (a string), not {item!r}")
        host = item.strip().lower()
        if "://" in host:
            bare = host.split("://", 1)[1].split("/", 1)[0].split("@")[-1].rsplit(":", 1)[0]
            raise ValueError(f"[{index}]: a host name, not a URL — did you mean {bare!r}?")
        if not _HOST.match(host):
            raise ValueError(
                f"[{index}]: {item!r} is not a host name (letters, digits, '-' and '.'; "
                "no port, path or wildcard)"
            )
        hosts.append(host.rstrip("."))
    return hosts


def _names(value: Any) -> Any:
    if not isinstance(value, list):
        raise ValueError("a list of names, e.g. [run_shell]")
    for index, item in enumerate(value):
        if not isinstance(item, str) or not item.strip() or "\n" in item:
            raise ValueError(f"[{index}]: a name (a one-line string), not {item!r}")
    return list(value)


def _path(value: Any) -> Any:
    if not isinstance(value, str) or not value.startswith("/") or "\0" in value:
        raise ValueError(f"an absolute path such as /srv/app, not {value!r}")
    return posixpath.normpath(value)


def _count(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"a whole number of at least 1, not {value!r}")
    return value


def _repeats(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, int) or value < 2:
        raise ValueError(f"a whole number of at least 2, not {value!r}")
    return value


def _flag(value: Any) -> Any:
    if not isinstance(value, bool):
        raise ValueError(f"true or false, not {value!r}")
    return value


TYPES: dict[str, tuple[Callable[[Any], Any], str]] = {
    "hosts": (_hosts, "a list of host names or IP addresses (no scheme, port or wildcard)"),
    "names": (_names, "a list of names"),
    "path": (_path, "an absolute path"),
    "count": (_count, "a whole number, at least 1"),
    "repeats": (_repeats, "a whole number, at least 2"),
    "flag": (_flag, "true or false"),
}


# --- packs ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Parameter:
    name: str
    type: str
    default: Any
    description: str

    def check(self, value: Any) -> Any:
        """The value as the checks use it; ValueError saying what is expected."""
        return TYPES[self.type][0](value)


@dataclass(frozen=True, slots=True)
class PackCheck:
    id: str
    polarity: str
    harm_category: str
    description: str
    owasp: tuple[str, ...]
    detect: str
    requires: str | None = None  # a parameter that must be set (or true) for the check

    @property
    def parameters(self) -> frozenset[str]:
        """The parameters its expression names."""
        return frozenset(name for _, name in _PLACEHOLDER.findall(self.detect))


@dataclass(frozen=True, slots=True)
class Pack:
    name: str
    version: int
    description: str
    parameters: dict[str, Parameter] = field(default_factory=dict)
    checks: tuple[PackCheck, ...] = ()
    includes: tuple[str, ...] = ()  # for a pack made of packs

    @property
    def reference(self) -> str:
        return PREFIX + self.name


def pack_names() -> tuple[str, ...]:
    """The built-in packs' names, e.g. ``egress``."""
    root = resources.files(__name__)
    return tuple(
        sorted(item.name[: -len(".yaml")] for item in root.iterdir() if item.name.endswith(".yaml"))
    )


def references() -> tuple[str, ...]:
    """``builtin:<name>`` of every pack."""
    return tuple(PREFIX + name for name in pack_names())


def reference_problem(reference: object) -> str | None:
    """Why ``reference`` names no built-in pack, or None."""
    known = references()
    if isinstance(reference, str) and reference in known:
        return None
    if not isinstance(reference, str):
        return f"a pack is named by a string such as {known[0]!r}, not {reference!r}"
    return unknown("pack", reference, known)


@cache
def load_pack(name: str) -> Pack:
    """The built-in pack ``name`` (without ``builtin:``); a malformed pack file is our bug,
    reported like a policy error, located in the pack's file."""
    source = f"{PREFIX}{name}"
    text = resources.files(__name__).joinpath(f"{name}.yaml").read_text(encoding="utf-8")
    document = compose(text, source)
    data = document.value
    if not isinstance(data, dict) or data.get("pack") != name:
        raise document.error(f"a pack file must start with `pack: {name}`", document.root)
    for key in data:
        if key not in PACK_KEYS:
            raise document.error(unknown("key", key, PACK_KEYS), document.key_nodes[(key,)])
    parameters: dict[str, Parameter] = {}
    includes = tuple(data.get("include") or ())
    for member in includes:
        for parameter in load_pack(member).parameters.values():
            parameters[parameter.name] = parameter
    for key, spec in (data.get("parameters") or {}).items():
        node = document.nodes[("parameters", key)]
        if not isinstance(spec, dict) or set(spec) - set(PARAMETER_KEYS):
            raise document.error(f"parameter {key!r}: keys {', '.join(PARAMETER_KEYS)}", node)
        if spec.get("type") not in TYPES:
            raise document.error(unknown("parameter type", str(spec.get("type")), TYPES), node)
        meaning = " ".join(str(spec.get("description", "")).split())
        parameter = Parameter(key, spec["type"], spec.get("default"), meaning)
        if parameter.default is not None:
            parameter.check(parameter.default)
        parameters[key] = parameter
    for key, value in (data.get("defaults") or {}).items():
        if key not in parameters:
            node = document.key_nodes[("defaults", key)]
            raise document.error(unknown("parameter", key, parameters), node)
        old = parameters[key]
        parameters[key] = Parameter(key, old.type, old.check(value), old.description)
    checks = []
    for index, spec in enumerate(data.get("checks") or ()):
        node = document.nodes[("checks", index)]
        if not isinstance(spec, dict) or set(spec) - set(CHECK_KEYS):
            raise document.error(f"a pack check has the keys {', '.join(CHECK_KEYS)}", node)
        if not str(spec.get("id", "")).startswith(name + "."):
            raise document.error(f"a check of pack {name!r} is named {name}.<what>", node)
        for _, placeholder in _PLACEHOLDER.findall(spec.get("detect", "")):
            if placeholder not in parameters:
                raise document.error(unknown("parameter", placeholder, parameters), node)
        checks.append(
            PackCheck(
                spec["id"],
                spec["polarity"],
                spec["harm_category"],
                " ".join(spec["description"].split()),
                tuple(spec.get("owasp") or ()),
                spec["detect"],
                spec.get("requires"),
            )
        )
    return Pack(
        name,
        int(data.get("version", 1)),
        " ".join(str(data.get("description", "")).split()),
        parameters,
        tuple(checks),
        includes,
    )


def members(pack: Pack) -> list[Pack]:
    """The packs whose checks ``pack`` brings: itself and those it includes, in order."""
    found = [pack] if pack.checks else []
    for member in pack.includes:
        found += members(load_pack(member))
    return found


def pack_of(reference: str) -> Pack:
    """The pack a ``builtin:<name>`` reference names (the reference checked beforehand)."""
    return load_pack(reference[len(PREFIX) :])


@dataclass(frozen=True, slots=True)
class Expansion:
    """A pack's checks for one set of parameter values: detect strings ready to parse."""

    checks: list[tuple[PackCheck, str]]


def expand(pack: Pack, values: dict[str, Any]) -> Expansion:
    """Each check of ``pack`` (and of the packs it includes) with the parameters written in:
    ``values`` are checked values; a parameter not given takes its default. A check that
    ``requires`` a parameter left unset (or false) is left out; an empty list is set."""
    chosen = {
        name: values.get(name, parameter.default) for name, parameter in pack.parameters.items()
    }
    checks = []
    for member in members(pack):
        for check in member.checks:
            if check.requires is not None and chosen.get(check.requires) in (None, False):
                continue
            detect = _PLACEHOLDER.sub(lambda found: _written(found, chosen), check.detect)
            checks.append((check, detect))
    return Expansion(checks)


def _written(found: re.Match[str], chosen: dict[str, Any]) -> str:
    value = chosen[found.group(2)]
    if found.group(1):
        return "".join(", " + _literal(item) for item in value)
    return _literal(value)


def _literal(value: Any) -> str:
    """A value as an expression literal: strings quoted, lists of them, numbers."""
    if isinstance(value, list):
        return "[" + ", ".join(_literal(item) for item in value) + "]"
    if isinstance(value, (bool, int, str)):
        return repr(value)
    raise PolicyError("<pack>", None, None, f"a parameter of type {type(value).__name__}")


# --- docs -----------------------------------------------------------------------------------

# Every parameter set, so every check of every pack is in the table (the judged one too).
_EVERYTHING = {"file_root": "/srv/app", "allowed_tools": []}


def markdown_tables() -> str:
    """The tables of docs/policy-packs.md: the packs and their parameters, then every check
    with its OWASP items and the channels it reads."""
    from rampart_otel.evaluation.expression import parse_detect

    lines = ["| pack | what | parameters |", "|---|---|---|"]
    for name in pack_names():
        pack = load_pack(name)
        own = pack.parameters if pack.checks else {}
        params = "<br>".join(
            f"`{p.name}` ({p.type}, default `{_default(p.default)}`): {p.description}"
            for p in own.values()
        )
        if pack.includes:
            params = "those of " + ", ".join(f"`{PREFIX}{m}`" for m in pack.includes)
        lines.append(f"| `{PREFIX}{name}` | {pack.description} | {params} |")
    lines += [
        "",
        "| check | SAFE when | OWASP | channels it reads | needs |",
        "|---|---|---|---|---|",
    ]
    for name in pack_names():
        pack = load_pack(name)
        if not pack.checks:
            continue
        for check, detect in expand(pack, _EVERYTHING).checks:
            judge = None
            if "judge(" in detect:
                from rampart_otel.evaluation.judge_endpoint import JudgeClient, JudgeConfig

                judge = JudgeClient(JudgeConfig(base_url="http://127.0.0.1:1/v1", model="m"))
            channels = parse_detect(detect, judge=judge).channels
            needs = f"`{check.requires}` set" if check.requires else ""
            lines.append(
                f"| `{check.id}` | {check.description} | {'<br>'.join(check.owasp)} | "
                f"{', '.join(f'`{c}`' for c in channels)} | {needs} |"
            )
    return "\n".join(lines) + "\n"


def _default(value: Any) -> str:
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(str(item) for item in value) + "]"
    return str(value)
