"""The mutation fuzzer (tests/fuzzing.py) for a few thousand inputs per target: no decoder
or receiver input crashes, answers 5xx, hangs, or is acknowledged unscorable. `make fuzz`
runs a million."""

from __future__ import annotations

import os

import pytest
from fuzzing import fuzz

INPUTS = int(os.environ.get("RAMPART_FUZZ_INPUTS", "15000"))


@pytest.mark.slow
def test_no_input_crashes_hangs_or_is_acknowledged_unscorable() -> None:
    counts = fuzz(INPUTS, seed=int(os.environ.get("RAMPART_FUZZ_SEED", "20261203")))
    assert sum(counts.values()) == INPUTS and min(counts.values()) >= INPUTS // 5
