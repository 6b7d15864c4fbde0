"""Every error rampart-otel raises on purpose, under one root.

``UserError`` is something the user can fix (a command-line option, a policy, a
configuration, a data directory): the CLI prints its one-line message and exits 2.
``DataError`` is trace data that cannot be read: it is reported where it was found and
reading goes on. ``Unavailable`` is a part that cannot take work now (a full queue, a writer
shutting down, an exporter without the internals we need). Anything else that escapes is a
bug of ours, reported as an internal error.
"""

from __future__ import annotations


class RampartOtelError(Exception):
    """The root: ``except RampartOtelError`` catches every error raised on purpose."""


class UserError(RampartOtelError):
    """A mistake the user can fix; the message is one line."""


class UsageError(UserError):
    """A command-line option or argument that cannot be used."""


class EmptyInput(UserError):
    """Input that held no span at all (an empty file or directory), where spans were due:
    a CI job scoring nothing must not pass."""

    def __init__(self, allow: str = "--allow-empty") -> None:
        super().__init__(
            "no spans in the input (an empty file or directory, or nothing but blank "
            f"records); pass {allow} if that is expected"
        )


class PolicyError(UserError, ValueError):
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


class ConfigError(UserError, ValueError):
    """A configuration file or option that cannot be used."""


class AuditError(UserError):
    """An audit filter, policy or data directory that cannot be used."""


class ReplayError(UserError):
    """Bad replay options, no usable exporter, or an endpoint that cannot be reached."""


class EndpointError(UserError, ValueError):
    """An endpoint URL or header that cannot be used."""


class SchemaError(UserError):
    """The results store (``results.db`` or PostgreSQL) was written by a newer rampart-otel."""


class StoreError(UserError):
    """A results store that cannot be opened: a bad URL, a server that is down or refuses,
    a missing driver."""


class DataError(RampartOtelError, ValueError):
    """Trace data that cannot be read."""


class DecodeError(DataError):
    """Input that is not well-formed OTLP trace data; the message is one line."""

    def __init__(self, message: str) -> None:
        # One line, whatever the cause: the message ends up in reports and HTTP bodies.
        super().__init__(" ".join(message.split()))

    @property
    def message(self) -> str:
        return self.args[0]


class Refusal(RampartOtelError):
    """A request the collector does not take; ``retry_after`` is set when retrying helps."""

    def __init__(
        self,
        http_status: int,
        grpc_code: int,
        message: str,
        retry_after: int | None = None,
        reason: str | None = None,
    ) -> None:
        super().__init__(message)
        self.http_status = http_status
        self.grpc_code = grpc_code
        self.message = message
        self.retry_after = retry_after
        self.reason = reason  # the metrics' name for it, when the status does not say


class Unavailable(RampartOtelError):
    """A part that cannot take work now."""


class QueueFull(Unavailable):
    """The writer already holds as much unsynced data as it may: the client should retry."""


class Backlogged(QueueFull):
    """Scoring is too far behind what was acknowledged: the client should retry later."""


class WriterClosed(Unavailable):
    """The writer is shutting down or has failed and accepts nothing more."""


class SenderUnavailable(Unavailable, RuntimeError):
    """The installed exporter lacks the internals we send through."""
