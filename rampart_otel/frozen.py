"""Immutable records made quickly: a frozen dataclass whose ``__init__`` sets each slot directly.

A frozen dataclass's own ``__init__`` sets each field through ``object.__setattr__`` (its
class forbids assignment), which costs about twice a plain class's. Coverage decisions and
their reasons are made by the tens of thousands per thousand runs (each channel's decision,
each reason, its payload, its code), so ``quick_init`` gives such a class an ``__init__`` of
the same signature that sets its slots through their descriptors. The instances are the
same: equal, hashed, pickled and frozen as before, ``dataclasses.replace`` works.
"""

from __future__ import annotations

import dataclasses
from typing import TypeVar

__all__ = ["quick_init"]

C = TypeVar("C", bound=type)

# Names the made ``__init__`` reads besides the fields (a field must not take one of them).
_MISSING = "_missing"
_RESERVED = ("self", _MISSING)
_PREFIXES = ("_set", "_default", "_factory")


def quick_init(cls: C) -> C:
    """Give frozen dataclass ``cls`` (with slots, positional fields, no ``__post_init__``)
    an ``__init__`` that sets its slots directly; anything else is a TypeError."""
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen or "__slots__" not in vars(cls):
        raise TypeError(f"{cls.__name__}: quick_init takes a frozen dataclass with slots")
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__}: quick_init cannot run a __post_init__")
    scope: dict[str, object] = {_MISSING: dataclasses.MISSING}
    parameters: list[str] = []
    lines: list[str] = []
    for n, found in enumerate(dataclasses.fields(cls)):
        name = found.name
        if not found.init or found.kw_only or name in _RESERVED or name.startswith(_PREFIXES):
            raise TypeError(f"{cls.__name__}.{name}: quick_init takes plain positional fields")
        scope[f"_set{n}"] = getattr(cls, name).__set__
        value = name
        if found.default is not dataclasses.MISSING:
            scope[f"_default{n}"] = found.default
            parameters.append(f"{name}=_default{n}")
        elif found.default_factory is not dataclasses.MISSING:
            scope[f"_factory{n}"] = found.default_factory
            parameters.append(f"{name}={_MISSING}")
            value = f"_factory{n}() if {name} is {_MISSING} else {name}"
        else:
            parameters.append(name)
        lines.append(f"    _set{n}(self, {value})")
    source = f"def __init__(self, {', '.join(parameters)}):\n" + "\n".join(lines or ["    pass"])
    exec(source, scope)  # as dataclasses makes its own __init__: one made for these fields
    init = scope["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"  # type: ignore[attr-defined]
    cls.__init__ = init  # type: ignore[misc]
    return cls
