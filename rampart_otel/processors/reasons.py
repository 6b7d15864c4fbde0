"""Coverage decisions as data: a channel's state and, per reason, a code from the closed set
(``channels.ReasonCode``), the spans it is about and the data its words need.

``processors.coverage`` decides and returns these; ``processors.wording`` renders them (the
only place their English is written), so a tool acts on the code, never on the prose.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rampart_otel.channels import ChannelState, CoverageSource, Reason, ReasonCode
from rampart_otel.model import Span


@dataclass(frozen=True, slots=True)
class Why:
    """One reason before it is worded: its code, the spans it is about (named first by its
    words), other evidence span ids (side effects, tool scopes), and the data its words need
    (counts, names, the model outputs they quote)."""

    code: ReasonCode
    spans: tuple[Span, ...] = ()
    data: Mapping[str, Any] = field(default_factory=dict)
    ids: tuple[str, ...] = ()

    def reason(self) -> Reason:
        """The code with its evidence span ids, as reports carry it."""
        return Reason.of(self.code, self.ids or tuple(span.span_id for span in self.spans))


@dataclass(frozen=True, slots=True)
class Decision:
    """A channel's state and the reasons for it, in order. ``unread_only``: only content in
    a form not read is missing, so no capture setting would close the gap."""

    state: ChannelState
    whys: tuple[Why, ...]
    source: CoverageSource = CoverageSource.INFERRED
    unread_only: bool = False
