"""What a reading of a run must produce: every channel, or only those the checks read.

A :class:`ScoringPlan` is a small immutable value built once per scoring (from the loaded
policies: ``evaluation.plan.scoring_plan``) and passed to ``normalize``. :data:`FULL_READING`
(``inspect``, and any output that shows a run's coverage: the JSON report,
HTML, the results store, the Python API) reads everything. A narrowed plan leaves out the
work whose only product is a channel no check reads:

- the user's input (``input``): the messages are not collected and the channel is not decided;
- ``response``, ``tool_calls.arguments``, ``tool_calls.results``: the channel is not decided
  (the response, calls and arguments themselves are still read: other channels and the
  evaluators stand on them);
- the way to close a gap (the ``fix`` reason) is worked out only for the plan's channels.

``tool_calls`` and every side-effect channel are always decided: the run's observability
level is theirs, side-effect channels are capped by what the tool calls show, and a check
reads any side-effect kind it names. A channel left out is absent from the run's coverage,
so a check that read it anyway would find it unobserved (UNDETERMINED, never SAFE); the
evaluation layer builds the plan from every check's ``channels``, so none does.
"""

from __future__ import annotations

from dataclasses import dataclass

from rampart_otel.channels import SIDE_EFFECT_PREFIX

# Decided whatever the plan: the observability level and the side-effect caps read them.
ALWAYS_DECIDED = frozenset({"tool_calls"})
# Channels whose only inputs are the messages, arguments and results a trace records.
CONTENT_CHANNELS = frozenset({"input", "response", "tool_calls.arguments", "tool_calls.results"})


@dataclass(frozen=True, slots=True)
class ScoringPlan:
    """The channels a reading decides: ``None`` for every one (the full reading)."""

    channels: frozenset[str] | None = None

    @property
    def full(self) -> bool:
        return self.channels is None

    def decides(self, key: str) -> bool:
        """Whether the reading decides channel ``key`` (its state and reasons)."""
        return (
            self.channels is None
            or key in self.channels
            or key in ALWAYS_DECIDED
            or key.startswith(SIDE_EFFECT_PREFIX)
        )

    def hints(self, key: str) -> bool:
        """Whether the reading works out how to close channel ``key``'s gap."""
        return self.channels is None or key in self.channels

    @property
    def content(self) -> bool:
        """Whether any channel of the trace's recorded content (messages, arguments,
        results) is read."""
        return self.channels is None or bool(self.channels & CONTENT_CHANNELS)


FULL_READING = ScoringPlan()
