"""Command line: ``rampart-otel`` (its commands, options and help: ``cli_app``).

Exit codes: 0 nothing failed; 1 a verdict failed; 2 usage error or unreadable input,
always with a one-line message and never a traceback.

A plain ``score`` command line runs without typer (``cli_score_args``): typer and click cost
each process ~15 ms of CPU before its first span (issue 46, start-up). It ends as typer's
would: a ``score`` that returns exits 0, Ctrl-C exits 130, end of input is "Aborted!" and
exit 1, a closed pipe exit 1 with nothing more written.
"""

from __future__ import annotations

import errno
import io
import os
import sys
from typing import Any

from rampart_otel.cli_common import EXIT_OK, fail, score_command
from rampart_otel.cli_score_args import score_arguments
from rampart_otel.errors import UserError
from rampart_otel.exporters.output import standard_output


def __getattr__(name: str) -> Any:
    """``app`` and the commands, from ``cli_app``: typer is imported when one is asked for."""
    if name.startswith("__"):
        raise AttributeError(name)
    from rampart_otel import cli_app

    return getattr(cli_app, name)


def _score_without_typer(arguments: dict[str, Any]) -> None:
    """``score_command`` ended as typer's ``main`` ends a command (typer/core.py ``_main``)."""
    try:
        score_command(**arguments)
    except EOFError:
        print(file=sys.stderr, flush=True)
        print("Aborted!", file=sys.stderr, flush=True)
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)
    except OSError as error:
        if error.errno != errno.EPIPE:
            raise
        try:  # startup: only for a closed pipe; typer 0.22+ has its own copy of click
            from typer._click.utils import PacifyFlushWrapper
        except ImportError:  # pragma: no cover - older typer
            from click.utils import PacifyFlushWrapper  # type: ignore[no-redef]

        sys.stdout = PacifyFlushWrapper(sys.stdout)
        sys.stderr = PacifyFlushWrapper(sys.stderr)
        sys.exit(1)
    sys.exit(EXIT_OK)


def _run(args: list[str]) -> None:
    arguments = score_arguments(args)
    if arguments is not None:
        _score_without_typer(arguments)
    from rampart_otel.cli_app import app_for

    app_for(args)()


def main() -> None:
    # A report on stdout survives any character trace data holds, as one written to a file,
    # and a write that fails (a full disk) is one line, as for a file.
    if isinstance(sys.stdout, io.TextIOWrapper):
        sys.stdout = standard_output(sys.stdout)
    try:
        try:
            _run(sys.argv[1:])
        finally:
            sys.stdout.flush()  # what is still buffered fails here, not unreported at exit
    except UserError as error:
        fail(str(error))
    except KeyboardInterrupt:
        fail("interrupted", 130)
    except BrokenPipeError:
        os._exit(EXIT_OK)
    except Exception as error:  # a bug of ours: still one line, details on request
        if os.environ.get("RAMPART_OTEL_DEBUG"):
            raise
        hint = "set RAMPART_OTEL_DEBUG=1 for a traceback"
        fail(f"internal error: {type(error).__name__}: {error} ({hint})")


if __name__ == "__main__":
    main()
