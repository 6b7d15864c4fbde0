"""The one error every OTLP decoder raises, so callers catch a single type."""

from __future__ import annotations


class DecodeError(ValueError):
    """Input that is not well-formed OTLP trace data; the message is one line."""

    def __init__(self, message: str) -> None:
        # One line, whatever the cause: the message ends up in reports and HTTP bodies.
        super().__init__(" ".join(message.split()))

    @property
    def message(self) -> str:
        return self.args[0]
