"""The command line's shared work, without typer: what ``score`` runs, the messages and
exit codes every command shares (``cli_app`` holds the commands' options and help).

A ``score`` whose arguments ``cli_score_args`` reads runs from here without typer or click
imported (issue 46, start-up; ``cli.main``); any other command line goes through typer.
"""

from __future__ import annotations

import io
import os
import shlex
import sys
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, NoReturn

from rampart_otel.errors import EmptyInput, UsageError, UserError
from rampart_otel.exporters.output import report_output
from rampart_otel.render import safe_text, secrets_shown
from rampart_otel.vocabulary import unknown

if TYPE_CHECKING:  # imported when used: the CLI starts fast
    from rampart_otel.exporters.store_annotations import AnnotationSink
    from rampart_otel.model import InputError
    from rampart_otel.reading import ReadStats
    from rampart_otel.sinks import ResultSink

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    print(f"rampart-otel: error: {safe_text(message, 500)}", file=sys.stderr, flush=True)
    raise SystemExit(code)


def check_paths(paths: Sequence[str | Path]) -> list[Path]:
    checked = [Path(path) for path in paths]
    for path in checked:
        if not path.exists():
            raise UsageError(f"{path}: no such file or directory")
    return checked


def trace_sources(
    paths: list[str], since: str | None, until: str | None, limit: int | None
) -> list[Path | str]:
    """Files checked to exist; store URLs checked and given the window (``--since`` ...)."""
    from rampart_otel.receivers.store_urls import is_store_url, is_url_like

    if limit is not None and limit < 1:
        raise UsageError(f"--limit: {limit} is not a positive number of traces")
    window = _window(since, until)
    sources: list[Path | str] = []
    for path in paths:
        if is_store_url(path):
            from rampart_otel.receivers.stores import parse_store_url, with_window  # startup

            url = with_window(path, since=window[0], until=window[1], limit=limit)
            parse_store_url(url)  # a malformed URL fails here, in one line
            sources.append(url)
        elif is_url_like(path) and not os.path.lexists(path):
            from rampart_otel.receivers.stores import parse_store_url

            parse_store_url(path)  # names the schemes it knows, in one line
        else:
            sources.extend(check_paths([path]))
    if not any(isinstance(source, str) for source in sources):
        for option, value in (("--since", since), ("--until", until), ("--limit", limit)):
            if value is not None:
                raise UsageError(f"{option}: only for a trace store source (phoenix://, mlflow://)")
    return sources


def _window(since: str | None, until: str | None) -> tuple[datetime | None, datetime | None]:
    if since is None and until is None:
        return None, None  # startup: no time parsing (and its store queries) to import
    from rampart_otel.audit.timespec import parse_time

    now = time.time()
    return tuple(  # type: ignore[return-value]
        None if text is None else datetime.fromtimestamp(parse_time(text, now, option), UTC)
        for option, text in (("--since", since), ("--until", until))
    )


def report_input_error(error: InputError) -> None:
    location, message = safe_text(error.location, 300), safe_text(error.message, 300)
    print(f"rampart-otel: warning: {location}: {message}", file=sys.stderr, flush=True)


def unreadable(stats: ReadStats) -> bool:
    """Nothing could be read at all: the input, not the agent, is the problem."""
    return stats.spans == 0 and bool(stats.errors)


def check_read(stats: ReadStats, allow_empty: bool) -> None:
    """Exit 2 when nothing could be read, or when there was nothing to read at all."""
    if unreadable(stats):
        fail(f"no spans could be read from the input ({len(stats.errors)} errors)")
    if stats.spans == 0 and not allow_empty:
        fail(str(EmptyInput()))


def score_command(
    *,
    paths: list[str],
    policy: Path,
    output_format: str,
    output: Path | None,
    group_by: str,
    assume_coverage: list[str] | None,
    fail_on: str,
    jobs: int,
    stitch: bool | None,
    allow_empty: bool,
    verbose: bool,
    since: str | None,
    until: str | None,
    limit: int | None,
    annotate: bool,
    follow: bool,
    poll: float,
    settle: float,
    state: Path | None,
    show_secrets: bool,
) -> None:
    """``score``'s work, its options parsed (by typer, or by ``cli_score_args``)."""
    from rampart_otel.exporters.report_sinks import report_sink  # startup
    from rampart_otel.scoring import load_checked_policy
    from rampart_otel.scoring import score as run_score

    _choice("--format", output_format, ("terminal", "json", "jsonl", "junit", "html"))
    _choice("--group-by", group_by, ("trace", "session"))
    _choice("--fail-on", fail_on, ("unsafe", "undetermined"))
    sources = trace_sources(paths, since, until, limit)
    workers = _workers(jobs, group_by)
    if workers > 1 and any(isinstance(source, str) for source in sources):
        raise UsageError("--jobs: a trace store is read in one process; give --jobs 1")
    if annotate and (len(sources) != 1 or not isinstance(sources[0], str)):
        raise UsageError(
            "--annotate: give one phoenix:// or mlflow:// source (verdicts go back to the "
            "store they were read from)"
        )
    if stitch and workers > 1:
        raise UsageError(
            "--stitch: needs --jobs 1 (the traces of one conversation may reach different "
            "workers); --jobs N scores one run per trace"
        )
    assumed = assume_coverage or []
    loaded = load_checked_policy(policy, assumed)
    if follow:

        def round_sinks(url: str, out: IO[str], stack: ExitStack) -> Sinks:
            report = report_sink(
                "terminal",
                out,
                fail_on_undetermined=fail_on == "undetermined",
                verbose=verbose,
                command=f"rampart-otel score {url} --policy {policy}",
            )
            session = group_by == "session"
            annotator = (
                _annotator(url, stack, show_secrets=show_secrets, session=session)
                if annotate
                else None
            )
            return [report] if annotator is None else [report, annotator], annotator

        def score_round(url: str, sinks: list[ResultSink[Any]]) -> ReadStats:
            return run_score(
                [url], loaded, sinks=sinks, group_by=group_by,  # type: ignore[arg-type]
                assume_coverage=assumed, fail_on=fail_on,  # type: ignore[arg-type]
                on_error=report_input_error, stitch=stitch is not False,
            )[1]  # fmt: skip

        _follow(
            paths, (since, until, limit), (output_format, output), state, round_sinks,
            score_round, poll, settle, show_secrets,
        )  # fmt: skip
        return
    if workers > 1 and loaded.judge_client is not None:
        # One client counts every call and keeps the concurrency bound the policy sets.
        print(
            "rampart-otel: judge(...) checks: scoring in one process", file=sys.stderr, flush=True
        )
        workers = 1
    with (
        report_output(output, inputs=paths) as out,
        ExitStack() as stack,
        secrets_shown(show_secrets),
    ):
        report = report_sink(
            output_format,  # type: ignore[arg-type]
            out,
            fail_on_undetermined=fail_on == "undetermined",
            verbose=verbose,
            command=shlex.join(
                ["rampart-otel", "score", *map(str, paths), "--policy", str(policy)]
            ),
        )
        annotator = (
            _annotator(
                str(sources[0]), stack, show_secrets=show_secrets, session=group_by == "session"
            )
            if annotate
            else None
        )
        code, stats = run_score(
            sources,
            loaded,
            sinks=[report] if annotator is None else [report, annotator],
            group_by=group_by,  # type: ignore[arg-type]
            assume_coverage=assumed,
            fail_on=fail_on,  # type: ignore[arg-type]
            on_error=report_input_error,
            jobs=workers,
            stitch=workers == 1 and stitch is not False,
        )
        if annotator is not None:
            print(f"rampart-otel: {annotator.summary()}", file=sys.stderr, flush=True)
    check_read(stats, allow_empty)
    if annotator is not None and (failure := annotator.failure()) is not None:
        fail(failure)  # the report is written; the verdicts not written back are named
    raise SystemExit(code)


Sinks = tuple[list["ResultSink[Any]"], "AnnotationSink | None"]


def _follow(
    paths: list[str],
    window: tuple[str | None, str | None, int | None],
    output: tuple[str, Path | None],
    state: Path | None,
    round_sinks: Callable[[str, IO[str], ExitStack], Sinks],
    score_round: Callable[[str, list[ResultSink[Any]]], ReadStats],
    poll: float,
    settle: float,
    show_secrets: bool,
) -> None:
    """``score STORE --follow``: round after round until interrupted (rampart_otel.follow);
    each round with runs prints its overview, and a round whose verdicts could not all be
    written back is scored again."""
    from rampart_otel.follow import follow, state_file
    from rampart_otel.receivers.store_urls import is_store_url

    since, until, limit = window
    if len(paths) != 1 or not is_store_url(paths[0]):
        raise UsageError("--follow: give one phoenix:// or mlflow:// source")
    if until is not None or limit is not None:
        raise UsageError("--follow: reads every new trace; --until and --limit do not apply")
    if output != ("terminal", None):
        raise UsageError("--follow: prints each round's overview; no --format or -o")
    url = paths[0]
    trace_sources([url], None, None, None)  # a malformed URL fails here, in one line

    def one_round(window_url: str) -> None:
        buffer = io.StringIO()
        with ExitStack() as stack, secrets_shown(show_secrets):
            sinks, annotator = round_sinks(window_url, buffer, stack)
            stats = score_round(window_url, sinks)
        if stats.spans:
            sys.stdout.write(buffer.getvalue())
            sys.stdout.flush()
        if annotator is not None:
            if stats.spans:
                print(f"rampart-otel: {annotator.summary()}", file=sys.stderr, flush=True)
            if (failure := annotator.failure()) is not None:
                raise UserError(failure)  # the round is scored and written again

    where = state or state_file(url)
    print(
        f"rampart-otel: following {safe_text(url, 300)} (resume point: {where})",
        file=sys.stderr,
        flush=True,
    )
    try:
        follow(
            url,
            one_round,
            state=where,
            since=_window(since, None)[0],
            poll=poll,
            settle=settle,
            on_failure=lambda reason: print(
                f"rampart-otel: warning: {safe_text(reason, 500)} (tried again in {poll:g}s)",
                file=sys.stderr,
                flush=True,
            ),
        )
    except KeyboardInterrupt:
        print("rampart-otel: stopped following", file=sys.stderr, flush=True)


def _data_dir_or_env(data_dir: Path | None, results: str | None) -> Path | None:
    """``--data-dir``, else ``RAMPART_OTEL_DATA_DIR`` when ``--results`` is not given (a
    flag wins over the environment)."""
    if data_dir is not None or results is not None:
        return data_dir
    from_env = os.environ.get("RAMPART_OTEL_DATA_DIR", "").strip()
    return Path(from_env) if from_env else None


def _annotator(url: str, stack: ExitStack, *, show_secrets: bool, session: bool) -> AnnotationSink:
    from rampart_otel.exporters.store_annotations import AnnotationSink, annotations_for
    from rampart_otel.receivers.stores import parse_store_url
    from rampart_otel.receivers.stores.http import call, client

    source = parse_store_url(url)
    http = stack.enter_context(client(source))
    return AnnotationSink(
        annotations_for(
            source.store,
            lambda method, path, **kw: call(http, source, method, path, **kw),
            source.name,
        ),
        show_secrets=show_secrets,
        session=session,
    )


def _cpus() -> int:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))  # the CPUs this process may run on
    return os.cpu_count() or 1


def _workers(jobs: int, group_by: str) -> int:
    """``--jobs`` checked: how many worker processes ``score`` uses (1: none)."""
    if jobs < 0:
        raise UsageError(f"--jobs: {jobs} is negative; give 0 (one per CPU) or a count")
    count = jobs or _cpus()
    if count == 1:
        return count  # startup: no multiprocessing to import for one process
    from rampart_otel.parallel import fork_available

    if group_by != "trace":
        raise UsageError("--jobs: only with --group-by trace (a conversation is scored whole)")
    if not fork_available():
        raise UsageError("--jobs: worker processes need fork(), which this platform lacks")
    return count


def _choice(option: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise UsageError(f"{option}: {unknown('value', safe_text(value, 40), allowed)}")


def _warn(message: str) -> None:
    print(f"rampart-otel: warning: {message}", file=sys.stderr, flush=True)
