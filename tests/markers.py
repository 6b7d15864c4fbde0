"""The ``unit`` / ``e2e`` markers, applied to every collected test by tests/conftest.py, so
nobody has to remember them (CONTRIBUTING.md, "Running the tests").

A test is **e2e** when it starts a process or a server: when its code, a fixture it uses, a
parameter it is given, or any helper of tests/ or samples/ those reach (followed through the
names their code uses) refers to something that starts one (``subprocess``,
``multiprocessing``, a socket, an HTTP or gRPC server, uvicorn, Playwright, the collector), or
when it uses ``pytester``. Every other test is **unit**. An explicit ``@pytest.mark.e2e`` or
``@pytest.mark.unit`` wins.

The reading is static, so :func:`guard` checks it while unit tests run: a unit test that starts
a process or binds an Internet socket fails with a message naming this module, instead of
being silently slow or port-bound under ``pytest -m unit``.
"""

from __future__ import annotations

import dis
import importlib
import inspect
import os
import socket
import sys
import threading
import types
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
# Helpers followed into: the tests' own and the recorders' (samples/, examples/), not the
# package's (its entry points that start something are listed below instead).
HELPERS = tuple(REPO / d for d in ("tests", "samples", "examples", "bench"))

# Fixtures from outside tests/ that run pytest or start servers.
E2E_FIXTURES = frozenset({"pytester", "testdir"})
# Modules whose every callable starts a process or a server.
E2E_MODULES = (
    "subprocess",
    "multiprocessing",
    "concurrent.futures.process",
    "asyncio.subprocess",
    "http.server",
    "socketserver",
    "uvicorn",
    "playwright",
    "rampart_otel.collector.service",
    "rampart_otel.receivers.otlp_grpc",
    "rampart_otel.parallel",
)


@cache
def _e2e_objects() -> frozenset[int]:
    """Single callables that start a process or open a socket."""
    import grpc
    import grpc.aio

    return frozenset(
        map(
            id,
            (
                os.system,
                os.fork,
                os.posix_spawn,
                os.execv,
                os.execvp,
                socket.socket,
                socket.create_server,
                socket.create_connection,
                grpc.server,
                grpc.aio.server,
                grpc.insecure_channel,
                grpc.aio.insecure_channel,
            ),
        )
    )


@cache
def _in_e2e_module(name: str) -> bool:
    return any(name == m or name.startswith(m + ".") for m in E2E_MODULES)


def _starts_something(obj: Any) -> bool:
    if isinstance(obj, types.ModuleType):
        return _in_e2e_module(obj.__name__)
    if id(obj) in _e2e_objects():
        return True
    module = getattr(obj, "__module__", None)
    return (
        isinstance(module, str)
        and _in_e2e_module(module)
        and (inspect.isfunction(obj) or inspect.isclass(obj) or inspect.isbuiltin(obj))
    )


@cache
def _is_helper_file(filename: str) -> bool:
    path = Path(filename).resolve()
    return any(path.is_relative_to(d) for d in HELPERS)


def _in_tests(code: types.CodeType) -> bool:
    return _is_helper_file(code.co_filename)


def _codes(obj: Any) -> Iterator[tuple[types.CodeType, dict[str, Any]]]:
    """The code objects of ``obj`` (a function, or a class's methods) defined in HELPERS."""
    obj = getattr(obj, "__func__", obj)
    obj = getattr(obj, "__wrapped__", obj)
    if inspect.isfunction(obj):
        if _in_tests(obj.__code__):
            yield obj.__code__, obj.__globals__
    elif inspect.isclass(obj):
        for value in vars(obj).values():
            if isinstance(value, staticmethod | classmethod):
                value = value.__func__
            elif isinstance(value, property):
                value = value.fget
            if inspect.isfunction(value) and _in_tests(value.__code__):
                yield value.__code__, value.__globals__


def _references(code: types.CodeType, globals_: dict[str, Any]) -> Iterator[Any]:
    """The objects ``code`` (and the functions nested in it) may use: each name it loads
    from its globals or imports, and each of its attribute names looked up on those of them
    that are modules (``subprocess.run``, ``harness.spawn``, ``grpc.server``). Reading the
    names rather than the bytecode's order over-approximates, cheaply: at worst a unit test
    is taken for e2e."""
    builtins = globals_.get("__builtins__", {})
    if isinstance(builtins, types.ModuleType):
        builtins = vars(builtins)
    names = code.co_names
    modules = []
    for name in names:
        if name in globals_:
            obj = globals_[name]
        elif name in sys.modules:  # an import in the function: ``import x.y`` / ``from x import``
            obj = sys.modules[name]
        elif _in_e2e_module(name):
            obj = importlib.import_module(name)
        else:
            obj = builtins.get(name)
        if obj is None:
            continue
        yield obj
        if isinstance(obj, types.ModuleType):
            modules.append(obj)
    for module in modules:
        for name in names:
            attribute = getattr(module, name, None)
            if attribute is None:
                continue
            if globals_.get(name) is module and not _loads_attribute(code, name, name):
                continue  # ``socket.AF_INET`` names ``socket`` once: not ``socket.socket``
            yield attribute
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            yield from _references(constant, globals_)


def _loads_attribute(code: types.CodeType, owner: str, attribute: str) -> bool:
    """Whether ``code`` reads ``owner.attribute`` (asked only when the two names are the
    same, as in ``socket.socket``: the names alone cannot tell)."""
    previous = None
    for instruction in dis.get_instructions(code):
        if (
            instruction.opname in ("LOAD_ATTR", "LOAD_METHOD")
            and instruction.argval == attribute
            and previous is not None
            and previous.opname == "LOAD_GLOBAL"
            and previous.argval == owner
        ):
            return True
        previous = instruction
    return False


_memo: dict[types.CodeType, bool] = {}


def _code_is_e2e(code: types.CodeType, globals_: dict[str, Any]) -> bool:
    if code not in _memo:
        _memo[code] = False  # a recursive helper is not e2e through itself
        _memo[code] = any(
            obj is not None
            and (
                _starts_something(obj)
                or any(_code_is_e2e(inner, g) for inner, g in _codes(obj) if inner is not code)
            )
            for obj in _references(code, globals_)
        )
    return _memo[code]


def _object_is_e2e(obj: Any) -> bool:
    return _starts_something(obj) or any(_code_is_e2e(c, g) for c, g in _codes(obj))


def is_e2e(item: pytest.Item) -> bool:
    """Whether ``item`` starts a process or a server (module docstring)."""
    if not isinstance(item, pytest.Function):
        return True
    if E2E_FIXTURES & set(item.fixturenames):
        return True
    if _object_is_e2e(item.obj):
        return True
    for name in item.fixturenames:
        for fixturedef in item._fixtureinfo.name2fixturedefs.get(name, ()):
            if _object_is_e2e(fixturedef.func):
                return True
    callspec = getattr(item, "callspec", None)
    if callspec is not None:
        for value in callspec.params.values():
            for part in value if isinstance(value, tuple | list) else (value,):
                if callable(part) and _object_is_e2e(part):
                    return True
    return False


def apply(items: list[pytest.Item]) -> None:
    """Mark each test ``unit`` or ``e2e`` unless it carries one of them already."""
    for item in items:
        if item.get_closest_marker("unit") or item.get_closest_marker("e2e"):
            continue
        item.add_marker(pytest.mark.e2e if is_e2e(item) else pytest.mark.unit)


# --- the run-time check of the unit marker ---------------------------------------------

_guarded: str | None = None
_PROCESS_EVENTS = frozenset(
    {"subprocess.Popen", "os.system", "os.fork", "os.forkpty", "os.posix_spawn", "os.exec"}
)


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _guarded is None or threading.get_ident() != threading.main_thread().ident:
        return
    if event in _PROCESS_EVENTS:
        what = f"started a process ({event})"
    elif event == "socket.bind" and isinstance(args[1], tuple):
        what = f"bound a socket to {args[1][:2]}"
    else:
        return
    raise RuntimeError(
        f"{_guarded} is marked unit but {what}: tests/markers.py did not see it start "
        "something; add @pytest.mark.e2e to it (or teach markers.py what it calls)"
    )


_installed = False


def install_guard() -> None:
    global _installed
    if not _installed:
        sys.addaudithook(_audit)
        _installed = True


@contextmanager
def guard(item: pytest.Item) -> Iterator[None]:
    """While it runs (in the main thread), a unit ``item`` may not start a process or bind
    a socket. Teardown is not guarded: the last test of a session may stop its servers."""
    global _guarded
    if item.get_closest_marker("unit") and not item.get_closest_marker("e2e"):
        _guarded = item.nodeid
    try:
        yield
    finally:
        _guarded = None
