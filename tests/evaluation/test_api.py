"""The public API is importable from the package root."""

from __future__ import annotations


def test_public_names():
    from rampart_otel import (
        Check,
        EvalOutcome,
        Policy,
        SafetyStatus,
        __version__,
        contains,
        glob,
        load_policy,
        not_,
        not_in,
        one_of,
        regex,
        response_contains,
        side_effect,
        tool_called,
    )

    assert __version__ == "0.1.0"
    check = Check(
        id="c",
        polarity="attack",
        detect=tool_called("x", a=regex("a"), b=glob("*"), c=contains("c"))
        | side_effect("http_request", host=not_in(["h"]), method=one_of(["GET"]), port=not_(1))
        | response_contains("s"),
    )
    assert Policy(name="p", checks=[check]).checks[0] is check
    assert callable(load_policy)
    assert EvalOutcome.UNDETERMINED == "undetermined"
    assert SafetyStatus.ERROR == "error"
