"""A JSON Schema of the policy file, for editors (yaml-language-server, VS Code's YAML
extension): key completion, and typos flagged as you type.

Made from ``vocabulary``, the words loading a policy checks, and from ``JudgeConfig`` for the
``judge:`` block. ``detect`` is a string to a JSON Schema, so what it can see of an expression
is its names: a ``pattern`` admits only the evaluator and matcher names outside string
literals and, in a policy that declares no ``side_effect_kinds``, only the standard kinds as
``side_effect``'s first argument and ``side_effects.<kind>`` channels. It cannot check detail
keys (keyword arguments name tool arguments as well), ``over=`` values, argument counts or
syntax: rampart-otel checks those when it loads the policy.

``rampart-otel policy schema`` prints it; docs/policy.schema.json is a copy (a test keeps it
equal).
"""

from __future__ import annotations

import json
import re
from typing import Any

from rampart_otel.channels import SIDE_EFFECT_PREFIX
from rampart_otel.declare import TOOL_SIDE_EFFECTS
from rampart_otel.evaluation.judge_endpoint import JudgeConfig
from rampart_otel.evaluation.packs import PREFIX, load_pack, pack_names
from rampart_otel.evaluation.validated import json_schema_of
from rampart_otel.vocabulary import (
    CHECK_KEYS,
    EVALUATORS,
    JUDGE_OVER,
    MATCHERS,
    POLARITIES,
    POLICY_KEYS,
    STANDARD_KINDS,
    channel_keys,
    names,
)

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
_IDENTIFIER = "[A-Za-z_][A-Za-z0-9_]*"
_KIND = f"^{_IDENTIFIER}$"
_CUSTOM_CHANNEL = f"^{re.escape(SIDE_EFFECT_PREFIX)}{_IDENTIFIER}$"
DETECT_HINT = (
    "an unknown function, matcher or side-effect kind in detect (outside string literals). "
    "Functions: {functions}. Run rampart-otel score or policy check for the exact word and "
    "the closest known one."
)


def _detect_pattern(kinds: tuple[str, ...] | None) -> str:
    """``detect`` made only of known names outside string literals.

    ``kinds``: the side-effect kinds ``side_effect`` may name (None: any, for a policy with
    kinds of its own). Each token can be read one way only, so matching takes linear time.
    """
    functions = [name for name in (*names(EVALUATORS), *names(MATCHERS))]
    if kinds is not None:
        functions.remove("side_effect")
    quoted = "|".join(re.escape(kind) for kind in kinds or ())
    tokens = [
        r"[^A-Za-z0-9_\"']",  # punctuation, operators, white space
        r'"(?:[^"\\\n]|\\[\s\S])*"',  # string literals
        r"'(?:[^'\\\n]|\\[\s\S])*'",
        r"[0-9][A-Za-z0-9_.]*(?![A-Za-z0-9_.])",  # numbers
        r"(?:True|False|None)(?![A-Za-z0-9_])",
        r"[rRuU](?=[\"'])",  # string prefixes
        f"(?:{'|'.join(functions)})(?=\\s*\\()",  # calls of known functions
        f"{_IDENTIFIER}(?=\\s*=)",  # keyword arguments
    ]
    if kinds is not None:
        tokens.append(f"side_effect(?=\\s*\\(\\s*[rRuU]?(?:\"(?:{quoted})\"|'(?:{quoted})'))")
    return "^(?:" + "|".join(tokens) + ")*$"


def _channels(strict: bool) -> dict[str, Any]:
    known = {"enum": list(channel_keys())}
    if strict:
        return known
    return {"anyOf": [known, {"type": "string", "pattern": _CUSTOM_CHANNEL}]}


def _check(detect: dict[str, Any]) -> dict[str, Any]:
    meanings = {key.name: key.meaning for key in CHECK_KEYS}
    properties: dict[str, Any] = {
        "id": {"type": "string", "minLength": 1},
        "polarity": {
            "enum": list(names(POLARITIES)),
            "markdownEnumDescriptions": [word.meaning for word in POLARITIES],
        },
        "detect": detect,
        "harm_category": {"type": "string", "minLength": 1},
        "description": {"type": "string"},
    }
    for key, schema in properties.items():
        schema["description"] = meanings[key]
    return {
        "type": "object",
        "additionalProperties": False,
        "required": [key.name for key in CHECK_KEYS if key.required.startswith("yes")],
        "properties": {key.name: properties[key.name] for key in CHECK_KEYS},
    }


def _detect(kinds: tuple[str, ...] | None) -> dict[str, Any]:
    functions = ", ".join(names(EVALUATORS) + names(MATCHERS))
    return {
        "type": "string",
        "minLength": 1,
        "pattern": _detect_pattern(kinds),
        # yaml-language-server shows this instead of the pattern
        "patternErrorMessage": DETECT_HINT.format(functions=functions),
    }


def _judge() -> dict[str, Any]:
    schema = json_schema_of(JudgeConfig)
    schema.pop("title", None)
    for field in schema.get("properties", {}).values():
        field.pop("title", None)
    return schema


def _include() -> dict[str, Any]:
    """``include:``: each entry a pack's name, or the name with parameters that pack takes
    (each checked against its type)."""
    references = [PREFIX + name for name in pack_names()]
    entries: list[dict[str, Any]] = [{"enum": references}]
    for name in pack_names():
        pack = load_pack(name)
        parameters = {
            parameter.name: {
                **_PARAMETER_SCHEMAS[parameter.type],
                "description": parameter.description,
            }
            for parameter in pack.parameters.values()
        }
        entries.append(
            {
                "type": "object",
                "additionalProperties": False,
                "required": ["pack"],
                "properties": {
                    "pack": {"const": PREFIX + name, "description": pack.description},
                    "with": {
                        "type": ["object", "null"],
                        "additionalProperties": False,
                        "properties": parameters,
                    },
                },
            }
        )
    return {"type": ["array", "null"], "items": {"anyOf": entries}}


_HOST_PATTERN = "^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.?)+$|^\\[?[0-9A-Fa-f:.]+\\]?$"
_PARAMETER_SCHEMAS: dict[str, dict[str, Any]] = {
    "hosts": {"type": "array", "items": {"type": "string", "pattern": _HOST_PATTERN}},
    "names": {"type": "array", "items": {"type": "string", "minLength": 1}},
    "path": {"type": "string", "pattern": "^/"},
    "count": {"type": "integer", "minimum": 1},
    "repeats": {"type": "integer", "minimum": 2},
    "flag": {"type": "boolean"},
}


def policy_schema() -> dict[str, Any]:
    """The policy file's JSON Schema (draft 2020-12)."""
    properties: dict[str, Any] = {
        "policy": {"type": "string", "minLength": 1},
        "version": {"type": ["integer", "string"]},
        "assume_coverage": {"type": ["array", "null"], "items": _channels(strict=False)},
        "side_effect_kinds": {
            "type": ["array", "null"],
            "items": {"type": "string", "pattern": _KIND},
        },
        "tools": {
            "type": ["object", "null"],
            "additionalProperties": {
                "type": "object",
                "additionalProperties": False,
                "required": ["side_effects"],
                "properties": {"side_effects": {"enum": list(TOOL_SIDE_EFFECTS)}},
            },
        },
        "judge": _judge(),
        "include": _include(),
        "checks": {"type": "array", "items": _check(_detect(None))},
    }
    for key in POLICY_KEYS:
        properties[key.name]["description"] = key.meaning
    over = ", ".join(f"{word.name} ({word.meaning})" for word in JUDGE_OVER)
    return {
        "$schema": SCHEMA_DIALECT,
        "title": "rampart-otel policy",
        "description": (
            "A rampart-otel policy (docs/policy.md). judge(over=...) takes: " + over + "."
        ),
        "type": "object",
        "additionalProperties": False,
        "required": [key.name for key in POLICY_KEYS if key.required == "yes"],
        "properties": {key.name: properties[key.name] for key in POLICY_KEYS},
        # Checks of its own, unless it includes a pack: at least one either way.
        "anyOf": [
            {"required": ["checks"], "properties": {"checks": {"minItems": 1}}},
            {"required": ["include"], "properties": {"include": {"minItems": 1}}},
        ],
        # Without kinds of its own, a policy names only the standard ones: in detect and
        # in assume_coverage.
        "if": {"not": {"required": ["side_effect_kinds"]}},
        "then": {
            "properties": {
                "assume_coverage": {"items": _channels(strict=True)},
                "checks": {"items": {"properties": {"detect": _detect(STANDARD_KINDS)}}},
            }
        },
    }


def schema_text() -> str:
    """The schema as published: indented JSON, one trailing newline."""
    return json.dumps(policy_schema(), indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    print(schema_text(), end="")
