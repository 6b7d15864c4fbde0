"""The one error a policy can raise, located in its file."""

from __future__ import annotations


class PolicyError(ValueError):
    """A policy that cannot be used; ``str()`` is ``FILE:LINE:COL: message`` (1-based)."""

    def __init__(self, source: str, line: int | None, column: int | None, message: str) -> None:
        self.source = source
        self.line = line
        self.column = column
        self.message = message
        super().__init__(str(self))

    def __str__(self) -> str:
        if self.line is None:
            return f"{self.source}: {self.message}"
        return f"{self.source}:{self.line}:{self.column or 1}: {self.message}"
