"""tests/markers.py: which tests are e2e, and the run-time check that keeps unit tests unit."""

from __future__ import annotations

import socket
import subprocess

import markers
import pytest
from cli_runner import run_cli


def _scores_a_file() -> None:
    run_cli("score", "samples/traces", "--policy", "samples/policy.yaml")


def _calls_a_helper_that_scores() -> None:
    _scores_a_file()


def _starts_a_process_inside() -> None:
    import subprocess as sp

    sp.run(["true"], check=True)


def _binds() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))


def _adds() -> int:
    return sum([1, 2])


def _refers_to_socket_constants_only() -> int:
    return int(socket.AF_INET)


# Explicitly unit: the functions above are only read, never called.
@pytest.mark.unit
@pytest.mark.parametrize(
    ("function", "e2e"),
    [
        (_scores_a_file, True),
        (_calls_a_helper_that_scores, True),
        (_starts_a_process_inside, True),
        (_binds, True),
        (subprocess.run, True),
        (_adds, False),
        (_refers_to_socket_constants_only, False),
    ],
    ids=lambda value: getattr(value, "__name__", str(value)),
)
def test_a_function_is_e2e_when_what_it_reaches_starts_something(function, e2e) -> None:
    assert markers._object_is_e2e(function) is e2e


@pytest.mark.unit
def test_a_unit_test_that_starts_a_process_or_binds_fails_with_the_fix() -> None:
    before = markers._guarded
    markers._guarded = "tests/x.py::test_y"
    try:
        with pytest.raises(RuntimeError, match=r"test_y is marked unit but started a process"):
            markers._audit("subprocess.Popen", ("true", ["true"], None, None))
        with pytest.raises(RuntimeError, match=r"bound a socket to \('127.0.0.1', 0\)"):
            markers._audit("socket.bind", (None, ("127.0.0.1", 0)))
        markers._audit("socket.bind", (None, "/tmp/unix-socket"))  # a Unix socket is no server
        markers._audit("open", ("f", "r", 0))
    finally:
        markers._guarded = before


def test_this_module_is_marked_as_it_runs(request: pytest.FixtureRequest) -> None:
    assert request.node.get_closest_marker("unit") is not None
    assert request.node.get_closest_marker("e2e") is None
