"""frozen.quick_init: the same instances as the dataclass's own __init__, made directly."""

from __future__ import annotations

import dataclasses
import inspect
import pickle
from dataclasses import dataclass, field

import pytest

from rampart_otel import channels, reasons
from rampart_otel.frozen import quick_init
from rampart_otel.processors import scopes, side_effects, tool_calls, turns


@dataclass(frozen=True, slots=True)
class Plain:
    code: str
    spans: tuple[str, ...] = ()
    data: object = None
    ids: list[str] = field(default_factory=list)


@quick_init
@dataclass(frozen=True, slots=True)
class Quick:
    code: str
    spans: tuple[str, ...] = ()
    data: object = None
    ids: list[str] = field(default_factory=list)


CALLS = [
    (("a",), {}),
    (("a", ("s1",)), {}),
    (("a", ("s1",), 3, ["i"]), {}),
    (("a",), {"ids": ["i"], "data": {"k": 1}}),
    ((), {"code": "a", "spans": ("s",)}),
]


def _fields(value: object) -> tuple[object, ...]:
    return tuple(getattr(value, f.name) for f in dataclasses.fields(value))  # type: ignore[arg-type]


@pytest.mark.parametrize(("args", "kwargs"), CALLS)
def test_made_as_the_dataclass_makes_it(
    args: tuple[object, ...], kwargs: dict[str, object]
) -> None:
    assert _fields(Quick(*args, **kwargs)) == _fields(Plain(*args, **kwargs))


def test_the_same_signature_and_a_fresh_default_each_time() -> None:
    quick, plain = inspect.signature(Quick).parameters, inspect.signature(Plain).parameters
    assert list(quick) == list(plain)
    assert [p.default for p in quick.values()][:3] == [p.default for p in plain.values()][:3]
    assert Quick("a").ids == [] and Quick("a").ids is not Quick("a").ids
    with pytest.raises(TypeError):
        Quick()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Quick("a", nope=1)  # type: ignore[call-arg]


def test_still_frozen_equal_hashed_replaced_and_pickled() -> None:
    one = Quick("a", ("s",), 2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        one.code = "b"  # type: ignore[misc]
    assert one == Quick("a", ("s",), 2) and one != Quick("b")
    assert dataclasses.replace(one, code="b") == Quick("b", ("s",), 2)
    assert pickle.loads(pickle.dumps(one)) == one
    assert hash(reasons.Kind("x")) == hash(reasons.Kind("x"))


def test_refuses_what_it_cannot_make() -> None:
    @dataclass(slots=True)
    class Mutable:
        a: int

    @dataclass(frozen=True)
    class NoSlots:
        a: int

    @dataclass(frozen=True, slots=True)
    class After:
        a: int

        def __post_init__(self) -> None:
            pass

    @dataclass(frozen=True, slots=True)
    class KeywordOnly:
        a: int = field(kw_only=True)

    for cls in (Mutable, NoSlots, After, KeywordOnly):
        with pytest.raises(TypeError):
            quick_init(cls)


def _quick_classes() -> list[type]:
    return [
        value
        for module in (reasons, channels, scopes, side_effects, tool_calls, turns)
        for value in vars(module).values()
        if isinstance(value, type)
        and value.__module__ == module.__name__
        and dataclasses.is_dataclass(value)
        and value.__init__.__qualname__ == f"{value.__qualname__}.__init__"
        and value.__init__.__code__.co_filename == "<string>"
        and "_set0" in value.__init__.__code__.co_names
    ]


def test_the_reasons_and_their_codes_are_made_so() -> None:
    found = {cls.__name__ for cls in _quick_classes()}
    assert {
        "Decision",
        "Why",
        "Fix",
        "ScopeGaps",
        "Kind",
        "Reason",
        "ToolCalls",
        "CallWindow",
    } <= found
    for cls in _quick_classes():  # each signature is its fields', as dataclass writes it
        names = [f.name for f in dataclasses.fields(cls)]
        assert list(inspect.signature(cls).parameters) == names
