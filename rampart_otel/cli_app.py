"""Command line: one sub-command per way of using rampart-otel, its options and help (typer).

Exit codes: 0 nothing failed; 1 a verdict failed; 2 usage error or unreadable input,
always with a one-line message and never a traceback.

Each command imports its own machinery inside its function (marked "startup"): ``--help``
and ``inspect`` must not pay for gRPC, uvicorn, SQLite and the OTLP exporters. ``score``'s
work is ``cli_common.score_command``, which ``cli.main`` also runs without this module
(``cli_score_args``).
"""

from __future__ import annotations

import copy
import os
import shlex
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from rampart_otel import __version__
from rampart_otel.cli_common import (
    EXIT_FAILED,
    EXIT_OK,
    _data_dir_or_env,
    _warn,
    check_paths,
    check_read,
    fail,
    report_input_error,
    score_command,
    trace_sources,
    unreadable,
)
from rampart_otel.errors import UsageError
from rampart_otel.exporters.output import report_output
from rampart_otel.render import secrets_shown

try:  # typer 0.22+ parses with its own copy of click
    from typer._click.exceptions import NoSuchOption
except ImportError:  # pragma: no cover - older typer
    from click.exceptions import NoSuchOption  # type: ignore[assignment]


class _Commands(TyperGroup):
    """A group whose mistyped option is answered with options that look like it, or none.

    Click compares whole names, dashes included, so every option shares two characters
    with any typo ('--bogus' was offered '--jobs' and '--verbose'); names are compared
    without their dashes here.
    """

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except NoSuchOption as error:
            if not error.possibilities:
                raise
            import difflib  # startup: only for a mistyped option

            typed = error.option_name.lstrip("-")
            offered = {option.lstrip("-"): option for option in error.possibilities}
            close = difflib.get_close_matches(typed, list(offered))
            raise NoSuchOption(
                error.option_name, possibilities=[offered[name] for name in close], ctx=error.ctx
            ) from None


app = typer.Typer(
    name="rampart-otel",
    help="Safety verdicts from AI agents' OpenTelemetry traces.",
    cls=_Commands,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _print_version(value: bool) -> None:
    if value:
        print(f"rampart-otel {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_print_version, is_eager=True, help="Show the version."),
    ] = False,
) -> None:
    """Safety verdicts from AI agents' OpenTelemetry traces."""


PathsArg = Annotated[
    list[str],
    typer.Argument(help="Trace files or directories (OTLP JSON/JSON Lines/protobuf, gzip ok)."),
]
SourcesArg = Annotated[
    list[str],
    typer.Argument(
        help="Trace files or directories (OTLP JSON/JSON Lines/protobuf, gzip ok), or trace "
        "stores: phoenix://HOST:PORT/PROJECT, mlflow://HOST:PORT/EXPERIMENT (docs/trace-stores.md)."
    ),
]
SinceOpt = Annotated[
    str | None,
    typer.Option(help="Store sources: traces started at or after: ISO 8601 (UTC) or 24h, 7d."),
]
UntilOpt = Annotated[
    str | None, typer.Option(help="Store sources: traces started before: ISO 8601 (UTC) or 24h.")
]
LimitOpt = Annotated[
    int | None, typer.Option(help="Store sources: at most this many traces, oldest first.")
]
AssumeCoverage = Annotated[
    list[str] | None,
    typer.Option("--assume-coverage", help="Channel key taken as observed; reported as assumed."),
]
ShowSecrets = Annotated[
    bool,
    typer.Option(
        "--show-secrets",
        help="Show values that look like secrets (API keys, tokens, passwords) in clear; "
        "masked by default, e.g. AKIA…[masked:aws-access-key-id]. JSON keeps them raw "
        "(docs/masking.md).",
    ),
]


AllowEmpty = Annotated[
    bool,
    typer.Option(
        "--allow-empty", help="Input with no span at all is no error (exit 0, nothing scored)."
    ),
]
ReplayAllowEmpty = Annotated[
    bool,
    typer.Option(
        "--allow-empty", help="Input with no span at all is no error (exit 0, nothing sent)."
    ),
]


@app.command()
def inspect(
    paths: SourcesArg,
    json_output: Annotated[
        bool, typer.Option("--json", help="Complete JSON (rampart-otel/inspect@1).")
    ] = False,
    stitch: Annotated[
        bool,
        typer.Option(
            "--stitch/--no-stitch",
            help="Join the traces of one agent's work into one run, as score does.",
        ),
    ] = True,
    allow_empty: AllowEmpty = False,
    since: SinceOpt = None,
    until: UntilOpt = None,
    limit: LimitOpt = None,
    show_secrets: ShowSecrets = False,
) -> None:
    """Show what the agent did in each run, and which channels the trace can attest."""
    from rampart_otel.exporters.inspect_view import write_json, write_terminal  # startup
    from rampart_otel.reading import ReadStats, agent_runs

    sources = trace_sources(paths, since, until, limit)
    stats = ReadStats()
    runs = agent_runs(sources, stats, on_error=report_input_error, stitch=stitch)
    if json_output:
        write_json(runs, stats.errors, sys.stdout)
    else:
        with secrets_shown(show_secrets):
            from rich.console import Console  # startup: rich for the terminal only

            write_terminal(runs, Console(highlight=False, soft_wrap=True))
    check_read(stats, allow_empty)


@app.command()
def score(
    paths: SourcesArg,
    policy: Annotated[
        Path,
        typer.Option(
            "--policy",
            envvar="RAMPART_OTEL_POLICY",
            show_envvar=True,
            help="Policy file (YAML); see docs/policy.md.",
        ),
    ],
    output_format: Annotated[
        str,
        typer.Option(
            "--format",
            help="terminal, json (rampart-otel/report@1), jsonl (rampart-otel/runs@1: a line "
            "per run, its coverage once), junit, or html (a self-contained page).",
        ),
    ] = "terminal",
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="Write the report here, not stdout.")
    ] = None,
    group_by: Annotated[
        str, typer.Option("--group-by", help="One run per trace, or per conversation (session).")
    ] = "trace",
    assume_coverage: AssumeCoverage = None,
    fail_on: Annotated[
        str, typer.Option("--fail-on", help="unsafe (and error), or undetermined as well.")
    ] = "unsafe",
    jobs: Annotated[
        int,
        typer.Option(
            "-j",
            "--jobs",
            help="Worker processes (0: one per CPU); one run per trace, no stitching.",
        ),
    ] = 1,
    stitch: Annotated[
        bool | None,
        typer.Option(
            "--stitch/--no-stitch",
            help="Join the traces of one agent's work (continuations, lost-context I/O) into "
            "one run. On by default with --jobs 1; --jobs N scores one run per trace.",
        ),
    ] = None,
    allow_empty: AllowEmpty = False,
    verbose: Annotated[
        bool,
        typer.Option(
            "-v",
            "--verbose",
            help="Terminal format: every result, run by run (default: an overview by file, "
            "the findings by check, the totals).",
        ),
    ] = False,
    since: SinceOpt = None,
    until: UntilOpt = None,
    limit: LimitOpt = None,
    annotate: Annotated[
        bool,
        typer.Option(
            "--annotate",
            help="Write each verdict back to the trace store read (a Phoenix span annotation, "
            "an MLflow assessment); re-running updates them.",
        ),
    ] = False,
    follow: Annotated[
        bool,
        typer.Option(
            "--follow",
            help="Store sources: score new traces round after round, from a stored resume "
            "point (--state), until interrupted.",
        ),
    ] = False,
    poll: Annotated[float, typer.Option(help="--follow: seconds between rounds.", min=0.1)] = 30.0,
    settle: Annotated[
        float,
        typer.Option(
            help="--follow: a trace is read once it started this many seconds ago (time to "
            "finish and reach the store).",
            min=0.0,
        ),
    ] = 60.0,
    state: Annotated[
        Path | None,
        typer.Option(
            help="--follow: the resume point's file. [default: "
            "$XDG_STATE_HOME/rampart-otel/follow/<store>.json]"
        ),
    ] = None,
    show_secrets: ShowSecrets = False,
) -> None:
    """Score recorded traces against a policy's safety checks."""
    score_command(**locals())  # the same names: what typer parsed, as cli_score_args gives it


# -- policy: check a policy file (and what it can decide on recorded traces), its schema ----

policy_app = typer.Typer(
    name="policy",
    cls=_Commands,
    help="Work with a policy file: write a starter one, check it (and what it can decide on "
    "your traces), or print its JSON Schema for editors.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
app.add_typer(policy_app)

PolicyArg = Annotated[Path, typer.Argument(help="Policy file (YAML); see docs/policy.md.")]


@policy_app.command("check")
def policy_check(
    policy: PolicyArg,
    paths: Annotated[
        list[Path] | None,
        typer.Argument(help="Trace files or directories: count what each check can decide."),
    ] = None,
    json_output: Annotated[
        bool, typer.Option("--json", help="JSON (rampart-otel/policy-check@1).")
    ] = False,
    assume_coverage: AssumeCoverage = None,
) -> None:
    """Validate a policy and show the channels each check reads; with traces, how many runs
    each check could decide and why the others stay undetermined.

    Exit code 0: valid (and no check failed on a run); 1: a check gave ERROR on some run;
    2: the policy or an option cannot be used, or no trace could be read.
    """
    from rampart_otel.exporters.policy_check_view import write_json, write_terminal  # startup
    from rampart_otel.policy_check import any_error, check_policy
    from rampart_otel.scoring import load_checked_policy

    traces = paths or []
    check_paths(traces)
    assumed = assume_coverage or []
    loaded = load_checked_policy(policy, assumed)
    document, stats = check_policy(
        loaded, str(policy), traces, assume_coverage=assumed, on_error=report_input_error
    )
    if json_output:
        write_json(document, sys.stdout)
    else:
        from rich.console import Console  # startup: rich for the terminal only

        write_terminal(document, Console(highlight=False, soft_wrap=True))
    if traces and unreadable(stats):
        fail(f"no spans could be read from the input ({len(stats.errors)} errors)")
    raise SystemExit(EXIT_FAILED if any_error(document) else EXIT_OK)


@policy_app.command("init")
def policy_init(
    traces: Annotated[
        list[str] | None,
        typer.Option(
            "--from",
            help="Trace files or directories: the hosts and tools seen there become the "
            "allow-lists' draft, each line marked '# review' with the runs and files it was "
            "seen in; one seen in a run the policy's other checks flag is left out, listed.",
        ),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option("-o", "--output", help="Write the policy here. [default: standard output]"),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing file.")] = False,
) -> None:
    """Write a starter policy: the builtin:agent-baseline pack with its parameters written out
    (docs/policy-packs.md). An existing file is never replaced without --force."""
    from rampart_otel.evaluation.packs.starter import policy_name, starter_policy

    if output is not None and output.is_file() and not force:
        fail(f"{output}: already exists; not replaced (--force replaces it)")
    if traces is None:
        text = starter_policy(policy_name(None))
    else:
        from rampart_otel.policy_draft import draft_from_traces

        draft = draft_from_traces(check_paths(traces), on_error=report_input_error)
        check_read(draft.stats, allow_empty=False)
        source = " ".join(traces)
        text = starter_policy(
            policy_name(draft.service), seen=draft.names, source=source, runs=draft.runs
        )
    if output is None or str(output) == "-":
        sys.stdout.write(text)
        return
    # The rule of every -o (exporters/output.py): a file replaced whole, a link written
    # through, a FIFO or device written into, a directory or an input trace file refused.
    with report_output(output, inputs=traces or (), what="policy") as out:
        out.write(text)


@policy_app.command("schema")
def policy_schema() -> None:
    """Print the policy file's JSON Schema, for editors (docs/policy.md, "Editor schema")."""
    from rampart_otel.evaluation.policy_schema import schema_text  # startup

    sys.stdout.write(schema_text())


# -- collector: live OTLP receiver and the audit of its verdicts ---------------------------


@app.command()
def collect(
    config: Annotated[
        Path | None, typer.Option("--config", help="Collector settings (YAML); see collector/.")
    ] = None,
    http: Annotated[
        str | None,
        typer.Option(
            envvar="RAMPART_OTEL_HTTP",
            show_envvar=True,
            help="OTLP/HTTP HOST:PORT, or off. [default: 127.0.0.1:4318]",
        ),
    ] = None,
    grpc: Annotated[
        str | None,
        typer.Option(
            envvar="RAMPART_OTEL_GRPC",
            show_envvar=True,
            help="OTLP/gRPC HOST:PORT, or off. [default: 127.0.0.1:4317]",
        ),
    ] = None,
    data_dir: Annotated[
        Path | None,
        typer.Option(
            envvar="RAMPART_OTEL_DATA_DIR",
            show_envvar=True,
            help="Segments and results.db. [default: ./rampart-data]",
        ),
    ] = None,
    policy: Annotated[
        list[Path] | None,
        typer.Option(
            envvar="RAMPART_OTEL_POLICY",
            show_envvar=True,
            help="Policy file; repeat for several (in the variable: separated by ':').",
        ),
    ] = None,
    auth_token: Annotated[
        str | None,
        typer.Option(
            envvar="RAMPART_OTEL_AUTH_TOKEN",
            show_envvar=True,
            help="Require 'Authorization: Bearer TOKEN' from clients.",
        ),
    ] = None,
    export_to: Annotated[
        str | None,
        typer.Option(
            help="Also send each verdict as an OTLP event to this endpoint (logs). [default: "
            "$OTEL_EXPORTER_OTLP_LOGS_ENDPOINT, or $OTEL_EXPORTER_OTLP_ENDPOINT/v1/logs]"
        ),
    ] = None,
    export_protocol: Annotated[
        str | None, typer.Option(help="http/protobuf or grpc. [default: http/protobuf]")
    ] = None,
    results: Annotated[
        str | None,
        typer.Option(help="Verdicts to this shared store (postgresql:// URL), not results.db."),
    ] = None,
    annotate: Annotated[
        str | None,
        typer.Option(
            "--annotate",
            envvar="RAMPART_OTEL_ANNOTATE",
            show_envvar=True,
            help="Write each verdict back to this trace store as it is scored: "
            "phoenix://HOST:PORT/PROJECT or mlflow://HOST:PORT/EXPERIMENT (docs/trace-stores.md).",
        ),
    ] = None,
    alert_webhook: Annotated[
        str | None,
        typer.Option(
            "--alert-webhook",
            envvar="RAMPART_OTEL_ALERT_WEBHOOK",
            show_envvar=True,
            help="POST each UNSAFE verdict to this URL, once (docs/alerts.md).",
        ),
    ] = None,
    quiet: Annotated[
        bool,
        typer.Option(
            "--quiet", "-q", help="Print only the listening addresses, warnings and errors."
        ),
    ] = False,
    show_secrets: ShowSecrets = False,
) -> None:
    """Receive OTLP traces, store them durably, and score each run as it completes.

    Prints where it listens and where verdicts go, then each UNSAFE or ERROR verdict as it
    lands and a summary now and then (--quiet: neither)."""
    from rampart_otel.collector.commands import collect as run_collect  # startup

    run_collect(
        config, http, grpc, data_dir, policy, auth_token, export_to, export_protocol, results,
        quiet, show_secrets, annotate=annotate, alert_webhook=alert_webhook,
    )  # fmt: skip


@app.command()
def audit(
    data_dir: Annotated[
        Path | None,
        typer.Option(
            help="The collector's data directory (or --results). [default: "
            "$RAMPART_OTEL_DATA_DIR, unless --results]"
        ),
    ] = None,
    results: Annotated[
        str | None,
        typer.Option(
            help="Shared results store: a postgresql:// URL (instead of --data-dir).",
        ),
    ] = None,
    since: Annotated[
        str | None, typer.Option(help="Runs started at or after: ISO 8601 (UTC) or 24h, 7d.")
    ] = None,
    until: Annotated[
        str | None, typer.Option(help="Runs started before: ISO 8601 (UTC) or 24h, 7d.")
    ] = None,
    service: Annotated[list[str] | None, typer.Option(help="service.name; repeatable.")] = None,
    check: Annotated[list[str] | None, typer.Option(help="Check id; repeatable.")] = None,
    status: Annotated[
        list[str] | None, typer.Option(help="safe, unsafe, undetermined or error; repeatable.")
    ] = None,
    policy: Annotated[str | None, typer.Option(help="Policy name. [default: every policy]")] = None,
    policy_version: Annotated[
        str | None, typer.Option(help="Policy version. [default: the latest of each policy]")
    ] = None,
    bucket: Annotated[str, typer.Option(help="Trend buckets: auto, hour, day or week.")] = "auto",
    limit: Annotated[
        str, typer.Option(help="List the N most recent matching results, or all.")
    ] = "100",
    json_output: Annotated[
        bool, typer.Option("--json", help="JSON (rampart-otel/report@1 with aggregates).")
    ] = False,
    html_output: Annotated[
        bool,
        typer.Option(
            "--html", help="One self-contained page: rate charts, recent non-safe results."
        ),
    ] = False,
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="Write the report here, not stdout.")
    ] = None,
    show_secrets: ShowSecrets = False,
    verbose: Annotated[
        bool,
        typer.Option(
            "-v", "--verbose", help="Each listed result with its summary, or its reasons and fix."
        ),
    ] = False,
) -> None:
    """Verdicts the collector stored: counts and rates per check, per service, over time."""
    from rampart_otel.audit.command import AuditOptions, results_target  # startup
    from rampart_otel.audit.command import audit as run_audit

    if json_output and html_output:
        raise UsageError("--json and --html: choose one")
    options = AuditOptions(
        since, until, tuple(service or ()), tuple(check or ()), tuple(status or ()),
        policy, policy_version, bucket, limit, json_output, html_output, verbose,
    )  # fmt: skip
    stored = _files_under(data_dir) if output is not None and data_dir is not None else []
    with (
        report_output(output, stored, "a file of the collector's data directory") as out,
        secrets_shown(show_secrets),
    ):
        run_audit(results_target(_data_dir_or_env(data_dir, results), results), options, out)


def _files_under(directory: Path) -> list[Path]:
    """Every file in ``directory`` and below (none if it cannot be listed)."""
    return [Path(top, name) for top, _, names in os.walk(directory) for name in names]


@app.command()
def rescore(
    data_dir: Annotated[Path, typer.Option(help="The collector's data directory.")],
    policy: Annotated[
        Path,
        typer.Option(
            envvar="RAMPART_OTEL_POLICY",
            show_envvar=True,
            help="The policy file, with a new version.",
        ),
    ],
    results: Annotated[
        str | None,
        typer.Option(
            help="Shared results store (postgresql:// URL) the collector wrote to.",
        ),
    ] = None,
    assume_coverage: AssumeCoverage = None,
) -> None:
    """Re-score the stored runs under a policy version, keeping the earlier verdicts."""
    from rampart_otel.audit.rescore import rescore as run_rescore  # startup

    run_rescore(data_dir, policy, assume_coverage or [], sys.stdout, results)


@app.command()
def diff(
    reports: Annotated[
        list[Path] | None, typer.Argument(help="Two JSON reports (score or audit --json).")
    ] = None,
    data_dir: Annotated[
        Path | None, typer.Option(help="Compare two policy versions stored here instead.")
    ] = None,
    results: Annotated[
        str | None,
        typer.Option(
            help="Compare two policy versions in this shared store (postgresql:// URL).",
        ),
    ] = None,
    policy: Annotated[str | None, typer.Option(help="Policy name (with --data-dir).")] = None,
    from_version: Annotated[
        str | None, typer.Option("--from", help="Version before. [default: the one before --to]")
    ] = None,
    to_version: Annotated[
        str | None, typer.Option("--to", help="Version after. [default: the latest]")
    ] = None,
    json_output: Annotated[
        bool, typer.Option("--json", help="JSON (rampart-otel/diff@1).")
    ] = False,
    show_secrets: ShowSecrets = False,
) -> None:
    """Runs whose verdict changed between two policy versions or two reports.

    Exit code 0: no verdict changed; 1: some did; 2: usage error or unreadable input.
    """
    from rampart_otel.audit.diff import DiffRequest  # startup
    from rampart_otel.audit.diff import diff as run_diff

    request = DiffRequest(list(reports or []), data_dir, policy, from_version, to_version, results)
    with secrets_shown(show_secrets):
        changed = run_diff(request, json_output, sys.stdout)
    raise SystemExit(EXIT_FAILED if changed else EXIT_OK)


@app.command()
def replay(
    paths: PathsArg,
    to: Annotated[
        str | None,
        typer.Option(
            "--to",
            help="OTLP endpoint URL (HTTP: base or /v1/traces). [default: "
            "$OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or $OTEL_EXPORTER_OTLP_ENDPOINT/v1/traces]",
        ),
    ] = None,
    protocol: Annotated[
        str | None,
        typer.Option(
            "--protocol",
            help="http/protobuf, http/json or grpc. [default: $OTEL_EXPORTER_OTLP_TRACES_"
            "PROTOCOL or $OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf]",
        ),
    ] = None,
    speed: Annotated[
        float | None,
        typer.Option(help="Keep the recording's timing, X times faster. [default: no waits]"),
    ] = None,
    max_gap: Annotated[
        float, typer.Option(help="With --speed: cut longer waits to this many seconds.")
    ] = 60.0,
    header: Annotated[
        list[str] | None, typer.Option("--header", help="KEY=VALUE request header; repeat.")
    ] = None,
    timeout: Annotated[float, typer.Option(help="Per request, retries included.")] = 10.0,
    max_batch: Annotated[int, typer.Option(help="Largest request, in spans.")] = 512,
    allow_empty: ReplayAllowEmpty = False,
) -> None:
    """Re-send recorded traces to an OTLP endpoint with their ids and timestamps."""
    from rampart_otel.exporters.otlp_send import (  # startup
        endpoint_from_env,
        parse_headers,
        protocol_from_env,
    )
    from rampart_otel.replay import replay as run_replay

    files = check_paths(paths)
    headers = parse_headers(header or [])
    protocol = protocol or protocol_from_env("traces") or "http/protobuf"
    to = to or endpoint_from_env("traces", protocol)
    if to is None:
        raise UsageError(
            "--to: give the OTLP endpoint, or set OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or "
            "OTEL_EXPORTER_OTLP_ENDPOINT"
        )
    code, _ = run_replay(
        files,
        to,
        protocol,
        headers,
        sys.stdout,
        speed=speed,
        max_gap=max_gap,
        timeout=timeout,
        max_batch=max_batch,
        on_error=report_input_error,
        on_refused=_warn,
        allow_empty=allow_empty,
    )
    raise SystemExit(code)


@app.command(context_settings={"allow_interspersed_args": False})
def watch(
    command: Annotated[
        list[str], typer.Argument(help="The program to run, after --: python agent.py")
    ],
    kinds: Annotated[
        str | None,
        typer.Option(
            "--kinds",
            help="What to record, comma-separated: network, http_client, process, file_write. "
            "[default: all]",
        ),
    ] = None,
    body_limit: Annotated[
        int, typer.Option(help="Bytes of each HTTP request body kept on its span (0: none).")
    ] = 16384,
) -> None:
    """Run a program with the watcher on from its first line: every connection, HTTP request,
    process and file write its Python code makes is a span where it happened (docs/watch.md)."""
    from rampart_otel import watch as watcher  # startup

    try:
        variables = watcher.environment(kinds, body_limit)
    except watcher.WatchError as error:
        raise UsageError(str(error)) from None
    environment = {**os.environ, **variables}
    sys.stdout.flush()
    try:
        os.execvpe(command[0], command, environment)
    except OSError as error:
        raise UsageError(f"cannot run {shlex.join(command)}: {error.strerror or error}") from None


def app_for(args: list[str]) -> typer.Typer:
    """``app`` with only the command ``args`` names (its first word), else the whole ``app``.

    typer builds the click command of every command it holds, each option's type and help,
    at each start (~10 ms of CPU): a process that runs ``score`` builds ``score``'s alone.
    The group's own options (``--version``, completion) and the command's usage, help and
    errors are those of the whole app; a first word that is no command's name (an option,
    a typo) gets the whole app, which lists them.
    """
    if not args:
        return app
    chosen = [
        info
        for info in app.registered_commands
        if (
            info.name
            or typer.main.get_command_name(info.callback.__name__ if info.callback else "")
        )
        == args[0]
    ]
    groups = [
        info
        for info in app.registered_groups
        if info.typer_instance is not None and info.typer_instance.info.name == args[0]
    ]
    if len(chosen) + len(groups) != 1:
        return app
    only = copy.copy(app)
    only.registered_commands = chosen
    only.registered_groups = groups
    return only
