"""assume_coverage: channel keys, and handing assumptions to the coverage processor."""

from __future__ import annotations

import pytest

from rampart_otel.channels import ChannelState, CoverageSource, channel_key_error, is_channel_key
from rampart_otel.evaluation.assume import assume_run
from rampart_otel.model import IntegrityFinding

from .factory import channel, make_run


@pytest.mark.parametrize(
    "key",
    ["response", "tool_calls", "tool_calls.arguments", "tool_calls.results",
     "side_effects.http_request", "side_effects._Custom9"],
)  # fmt: skip
def test_valid_keys(key):
    assert is_channel_key(key)


@pytest.mark.parametrize(
    "key",
    ["", "responses", "tool_calls.", "tool_calls.args", "side_effects", "side_effects.",
     "side_effects.http-request", "side_effects.a.b", "side_effects.9x", "Response", 3, None],
)  # fmt: skip
def test_invalid_keys(key):
    assert not is_channel_key(key)


def test_channel_key_error_lists_valid_keys():
    assert channel_key_error("x") == (
        "invalid channel key 'x': expected one of input, response, tool_calls, "
        "tool_calls.arguments, tool_calls.results or side_effects.<kind> with <kind> an identifier"
    )


def test_assume_run_marks_observed_as_assumed_without_touching_the_input():
    run = make_run(channels={"tool_calls": "observed", "response": "partial"})
    assumed = assume_run(run, ["response", "side_effects.http_request", "tool_calls"])
    for key in ("response", "side_effects.http_request"):
        coverage = assumed.coverage.get(key)
        assert coverage.state is ChannelState.OBSERVED
        assert coverage.source is CoverageSource.ASSUMED
        assert coverage.reasons
    # a channel the trace already shows as observed keeps its inferred coverage
    assert assumed.coverage.get("tool_calls") == channel("observed")
    assert run.coverage.get("response").state is ChannelState.PARTIAL
    assert "side_effects.http_request" not in run.coverage.channels
    assert assumed.tool_calls is run.tool_calls


def test_assumed_channels_are_capped_by_integrity_findings():
    run = make_run(channels={})
    run.integrity.append(
        IntegrityFinding("dropped_attributes", "3 attributes dropped", channels=["side_effects.*"])
    )
    assumed = assume_run(run, ["side_effects.http_request", "response"])
    http = assumed.coverage.get("side_effects.http_request")
    assert http.state is ChannelState.PARTIAL
    assert "3 attributes dropped" in http.reasons
    assert assumed.coverage.get("response").state is ChannelState.OBSERVED


def test_assume_run_rejects_invalid_keys_and_skips_empty():
    run = make_run()
    with pytest.raises(ValueError, match=r"invalid channel key 'side_effects\.a-b'"):
        assume_run(run, ["side_effects.a-b"])
    assert assume_run(run, []) is run
