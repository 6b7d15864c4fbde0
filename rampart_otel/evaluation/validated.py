"""Frozen dataclasses validated by pydantic-core directly: the models every ``score`` builds
before its first span (a policy, its checks and tools, the judge's block).

A pydantic ``BaseModel`` derives its core schema from its annotations through pydantic's
model machinery, which is about a quarter of the CPU a ``score`` spends before its first
span (docs/performance.md). Here the core schema is written beside the dataclass and
pydantic-core validates with it, as it does for a model: the same ``ValidationError``
(pydantic's is pydantic-core's), with the same messages and locations. The dataclass gives
the attributes, equality, hashing and the signature type checkers read (pydantic-core
also keeps its three ``__pydantic_*__`` entries in each instance's ``__dict__``, which
equality, ``repr`` and ``dataclasses.asdict`` do not read);
``tests/evaluation/test_validated.py`` keeps each schema's fields and defaults equal to its
dataclass's.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from pydantic_core import SchemaValidator
from pydantic_core import core_schema as cs

__all__ = [
    "field_names",
    "json_schema_of",
    "optional",
    "required",
    "schema_of",
    "validate",
    "validated",
]

T = TypeVar("T")

_SCHEMAS: dict[type, cs.CoreSchema] = {}
_VALIDATORS: dict[type, SchemaValidator] = {}


def required(schema: cs.CoreSchema) -> cs.ModelField:
    """A field that must be given."""
    return cs.model_field(schema)


def optional(schema: cs.CoreSchema, default: Any) -> cs.ModelField:
    """A field with a default (not validated, as a model's is not; a list or dict is copied
    for each instance)."""
    return cs.model_field(cs.with_default_schema(schema, default=default))


def validated(
    fields: Mapping[str, cs.ModelField], *, after: Callable[[Any], Any] | None = None
) -> Callable[[type[T]], type[T]]:
    """Make a frozen keyword-only dataclass validate its arguments with ``fields``, then with
    ``after`` (given the built instance, it returns it or raises ValueError), as a frozen
    pydantic model with extra keys forbidden does."""

    def build(cls: type[T]) -> type[T]:
        fields_schema = cs.model_fields_schema(
            dict(fields), model_name=cls.__name__, extra_behavior="forbid"
        )
        config = cs.CoreConfig(title=cls.__name__, extra_fields_behavior="forbid")
        schema: cs.CoreSchema = cs.model_schema(cls, fields_schema, config=config)
        if after is not None:
            schema = cs.no_info_after_validator_function(after, schema)
        validator = SchemaValidator(schema)

        @functools.wraps(cls.__init__)  # the dataclass's signature, for help() and inspect
        def __init__(self: T, **values: Any) -> None:
            validator.validate_python(values, self_instance=self)

        cls.__init__ = __init__  # type: ignore[method-assign, assignment]
        _SCHEMAS[cls] = schema
        _VALIDATORS[cls] = validator
        return cls

    return build


def validate(cls: type[T], data: Any) -> T:
    """``data`` (a mapping, as read from a file) validated as a ``cls``."""
    made: T = _VALIDATORS[cls].validate_python(data)
    return made


def schema_of(cls: type) -> cs.CoreSchema:
    """``cls``'s core schema, to nest it in another's."""
    return _SCHEMAS[cls]


def json_schema_of(cls: type) -> dict[str, Any]:
    """The JSON Schema of what ``cls`` takes, as pydantic writes a model's: its fields'
    (pydantic's, from the same core schema), no other key, the docstring as description."""
    import inspect

    from pydantic.json_schema import GenerateJsonSchema  # startup: only `policy schema`

    schema = _SCHEMAS[cls]
    while schema["type"] != "model":  # under ``after``
        schema = schema["schema"]
    made = {
        **GenerateJsonSchema().generate(schema["schema"]),
        "additionalProperties": False,
        "description": inspect.cleandoc(cls.__doc__ or ""),
        "title": cls.__name__,
    }
    return dict(sorted(made.items()))


def field_names(cls: type) -> tuple[str, ...]:
    """The keys ``cls`` takes, in order."""
    return tuple(field.name for field in dataclasses.fields(cls) if field.init)
