"""The models pydantic-core validates directly (``evaluation/validated.py``): each core
schema says what its dataclass says (the same fields, in order, the same defaults), and the
dataclass validates, refuses unknown keys and stays frozen as a pydantic model did."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

import pydantic
import pytest

from rampart_otel.evaluation import validated
from rampart_otel.evaluation.judge_config import JudgeConfig
from rampart_otel.evaluation.policy import Check, Policy, ToolDeclaration
from rampart_otel.evaluation.validated import field_names, schema_of, validate

MODELS = (ToolDeclaration, Check, Policy, JudgeConfig)


def _fields_schema(cls: type) -> dict[str, Any]:
    schema: Any = schema_of(cls)
    while schema["type"] != "model":  # under an after-validator
        schema = schema["schema"]
    fields: dict[str, Any] = schema["schema"]["fields"]
    return fields


def test_every_validated_model_is_checked_here() -> None:
    assert set(validated._SCHEMAS) == set(MODELS)


@pytest.mark.parametrize("cls", MODELS, ids=lambda cls: cls.__name__)
def test_the_schema_has_the_dataclass_fields_and_defaults(cls: type) -> None:
    fields = _fields_schema(cls)
    assert tuple(fields) == field_names(cls)
    for field in dataclasses.fields(cls):
        if not field.init:
            continue
        schema = fields[field.name]["schema"]
        if field.default is not dataclasses.MISSING:
            default = field.default
        elif field.default_factory is not dataclasses.MISSING:
            default = field.default_factory()
        else:
            assert schema["type"] != "default", f"{field.name}: a default in the schema only"
            continue
        assert schema["type"] == "default", f"{field.name}: a default in the dataclass only"
        assert schema["default"] == default, field.name


def test_a_constructor_validates_as_a_model_did() -> None:
    with pytest.raises(pydantic.ValidationError) as caught:
        Check(id="a", detect="tool_called('x')", polarity="both")  # type: ignore[arg-type]
    (error,) = caught.value.errors(include_url=False)
    assert (error["type"], error["loc"]) == ("literal_error", ("polarity",))
    with pytest.raises(pydantic.ValidationError) as caught:
        JudgeConfig(base_url="u", model="m", retries=2, colour="red")  # type: ignore[call-arg]
    assert caught.value.errors()[0]["type"] == "extra_forbidden"


def test_a_model_is_frozen_and_compares_by_its_fields() -> None:
    check = Check(id="a", detect="tool_called('x')", polarity="attack")
    with pytest.raises(dataclasses.FrozenInstanceError):
        check.id = "b"  # type: ignore[misc]
    again = validate(Check, {"id": "a", "detect": "tool_called('x')", "polarity": "attack"})
    assert again == check and hash(again) == hash(check)
    policy = Policy(name="p", checks=[check])
    assert (
        policy.assume_coverage == []
        and policy.assume_coverage is not Policy(name="p", checks=[check]).assume_coverage
    )  # a default list for each policy


def test_help_shows_the_fields() -> None:
    assert "polarity" in str(inspect.signature(Check))
