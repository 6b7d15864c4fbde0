"""``score``'s report formats as sinks (``sinks.ResultSink``): terminal, JSON, JUnit, HTML.

Each wraps its writer at the writer's entry point and keeps the writer's output byte for
byte; :func:`report_sink` is the one place a ``--format`` name becomes an output.
"""

from __future__ import annotations

import io
import queue
import threading
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import IO, TYPE_CHECKING, Any, Literal

from rampart_otel.exporters.report_json import (
    JsonReportWriter,
    run_line,
    runs_footer,
    runs_header,
)
from rampart_otel.model import InputError
from rampart_otel.sinks import Closing, Opening, ResultSink, Scored

if TYPE_CHECKING:  # startup: each format's writer is imported when its sink writes
    from rampart_otel.evaluation import CheckResult, Policy

Format = Literal["terminal", "json", "jsonl", "junit", "html"]
HTML_VIEWS_PER_HANDOFF = 16  # views handed to the page's thread at once: few thread switches
HTML_RUNS_AHEAD = 4  # handoffs queued for the page at most: memory stays bounded


def report_sink(
    output_format: Format,
    out: IO[str],
    *,
    fail_on_undetermined: bool = False,
    verbose: bool = False,
    command: str = "rampart-otel score ...",
) -> ResultSink[Any]:
    """The sink that writes ``score``'s report in ``output_format`` to ``out``.

    ``fail_on_undetermined``: UNDETERMINED fails (terminal colours, JUnit failures);
    terminal: every result if ``verbose``, else the overview, whose "next" block repeats
    ``command``.
    """
    if output_format == "json":
        return JsonReportSink(out)
    if output_format == "jsonl":
        return RunsReportSink(out)
    if output_format == "junit":
        return JunitSink(out, fail_on_undetermined=fail_on_undetermined)
    if output_format == "html":
        return HtmlReportSink(out)
    return TerminalSink(
        out, fail_on_undetermined=fail_on_undetermined, verbose=verbose, command=command
    )


def _first_policy(opening: Opening) -> Policy:
    return opening.policies[0]


class _ResultsKept:
    """Formats that need every result before they write (terminal, JUnit): the results.
    Neither shows a run's coverage (the verdicts, their summaries and the observability
    level only; the terminal's every result, ``verbose``, the gaps of the channels a check
    read), so scoring reads only the channels the checks read."""

    needs_agent_run = False
    shows_coverage = False

    def __init__(self, keeps_coverage: bool = False) -> None:
        self.kept: list[CheckResult] = []
        self.policy: Policy | None = None
        self.keeps_coverage = keeps_coverage

    def open(self, opening: Opening) -> None:
        self.policy = _first_policy(opening)

    def prepare(self, scored: Scored) -> list[CheckResult]:
        return scored.results

    def write(self, batch: Sequence[list[CheckResult]]) -> None:
        # Kept without their coverage, which neither shows: every run's channels (and the
        # decisions their words are made from, ``ChannelCoverage.deferred``) are not held
        # to the end of the input. A copy: another sink may hold the same results.
        for results in batch:
            if self.keeps_coverage:
                self.kept.extend(results)
            else:
                self.kept.extend([replace(result, coverage=None) for result in results])

    def _policy(self) -> Policy:
        if self.policy is None:
            raise RuntimeError("sink closed before it was opened")
        return self.policy


class TerminalSink(_ResultsKept):
    """The terminal overview (or every result, ``verbose``), with the judge's cost."""

    def __init__(
        self,
        out: IO[str],
        *,
        fail_on_undetermined: bool = False,
        verbose: bool = False,
        command: str = "rampart-otel score ...",
    ) -> None:
        super().__init__(keeps_coverage=verbose)  # every result shows its gaps
        self.out = out
        self.fail_on_undetermined = fail_on_undetermined
        self.verbose = verbose
        self.command = command

    def close(self, closing: Closing) -> None:
        from rich.console import Console  # startup: rich for the terminal only

        from rampart_otel.exporters.terminal_report import (  # startup: terminal only
            write_compact_report,
            write_terminal_report,
        )

        policy = self._policy()
        kept = self.kept
        console = Console(file=self.out, highlight=False, soft_wrap=True)
        runs_seen = len({result.run_id for result in kept})
        title = (
            f"rampart-otel score: policy {policy.name} v{policy.version}, "
            f"{len(policy.checks)} checks, {runs_seen} runs, {closing.spans} spans"
        )
        population = closing.population()
        if self.verbose:
            write_terminal_report(
                kept, population, closing.errors, console, title, self.fail_on_undetermined
            )
        else:
            write_compact_report(
                kept,
                population,
                closing.errors,
                console,
                title,
                self.fail_on_undetermined,
                self.command,
            )
        judge = closing.judge
        if judge is not None:
            console.print(
                f"judge: {judge['calls']} calls, {judge['prompt_tokens']} prompt and "
                f"{judge['completion_tokens']} completion tokens, {judge['cache_hits']} "
                f"cache hits, {judge['failures']} failures"
            )


class JunitSink(_ResultsKept):
    """JUnit XML, one testcase per (run, check)."""

    def __init__(self, out: IO[str], *, fail_on_undetermined: bool = False) -> None:
        super().__init__()
        self.out = out
        self.fail_on_undetermined = fail_on_undetermined

    def close(self, closing: Closing) -> None:
        from rampart_otel.exporters.junit import write_junit  # startup: XML for JUnit only

        write_junit(self.kept, self.out, self._policy().name, self.fail_on_undetermined)


class JsonReportSink:
    """The report@1 document, streamed: each run's entries are rendered where it was scored
    (``prepare``: a worker's own writer, under ``--jobs N``) and written in order."""

    needs_agent_run = False
    shows_coverage = True  # every result's entry holds its run's coverage, every channel

    def __init__(self, out: IO[str]) -> None:
        self.writer = JsonReportWriter(out)
        self._renderer = JsonReportWriter(io.StringIO())  # its entries only: ``prepare`` joins them

    def open(self, opening: Opening) -> None:
        self.writer.start([{"name": p.name, "version": p.version} for p in opening.policies])

    def prepare(self, scored: Scored) -> tuple[str, int]:
        """The run's entries, each after ``",\n"`` as ``add`` writes it (the writer drops
        the first one's comma); joined, not written to a buffer, which stores every
        character in four bytes and copies them all out again."""
        results = scored.results
        if not results:
            return "", 0
        return self._renderer.entries(results), len(results)

    def write(self, batch: Sequence[tuple[str, int]]) -> None:
        for text, count in batch:
            self.writer.add_rendered(text, count)

    def close(self, closing: Closing) -> None:
        self.writer.finish(closing.population(), closing.errors, closing.judge)


class RunsReportSink:
    """The runs@1 report, JSON Lines: a header line, one line per run (what its results
    share written once), the totals' line. Each line stands alone, so a reader streams
    it; rendered where the run was scored (``prepare``), like report@1."""

    needs_agent_run = False
    shows_coverage = True  # each run's line holds its coverage, every channel

    def __init__(self, out: IO[str]) -> None:
        self.out = out

    def open(self, opening: Opening) -> None:
        self.out.write(
            runs_header([{"name": p.name, "version": p.version} for p in opening.policies])
        )

    def prepare(self, scored: Scored) -> str:
        return run_line(scored.results) if scored.results else ""

    def write(self, batch: Sequence[str]) -> None:
        self.out.write("".join(batch))

    def close(self, closing: Closing) -> None:
        self.out.write(runs_footer(closing.population(), closing.errors, closing.judge))


_DONE = None


class HtmlReportSink:
    """The HTML page. ``write_html_report`` streams the page while it pulls the runs' views
    from an iterator; here the views are pushed, so the page is written on a thread of its
    own that takes them from a bounded queue, and ``close`` waits for it (raising what
    stopped it)."""

    needs_agent_run = True
    shows_coverage = True

    def __init__(self, out: IO[str]) -> None:
        self.out = out
        self.title = "rampart-otel score"
        self._views: queue.Queue[list[dict[str, Any]] | None] = queue.Queue(HTML_RUNS_AHEAD)
        self._pending: list[dict[str, Any]] = []  # views not yet handed over
        self._errors: list[InputError] = []  # read by the page after the last run
        self._closing: Closing | None = None
        self._thread: threading.Thread | None = None
        self._failure: BaseException | None = None

    def open(self, opening: Opening) -> None:
        policy = _first_policy(opening)
        self.title = f"rampart-otel score: policy {policy.name} v{policy.version}"

    def prepare(self, scored: Scored) -> dict[str, Any]:
        from rampart_otel.exporters.html_report import run_view  # startup: jinja2 for HTML only

        return run_view(scored.agent_run, scored.results)

    def write(self, batch: Sequence[dict[str, Any]]) -> None:
        self._pending.extend(batch)
        if len(self._pending) >= HTML_VIEWS_PER_HANDOFF:
            self._put(self._pending)
            self._pending = []

    def close(self, closing: Closing) -> None:
        self._closing = closing
        self._errors.extend(closing.errors)
        if self._pending:
            self._put(self._pending)
            self._pending = []
        self._put(_DONE)
        if self._thread is not None:
            self._thread.join()
        if self._failure is not None:
            raise self._failure

    def _put(self, item: list[dict[str, Any]] | None) -> None:
        # Started at the first run, not at open: ``--jobs N`` forks its workers in between,
        # and a process should not fork while a thread of its own is writing.
        if self._thread is None:
            self._thread = threading.Thread(target=self._page, name="html-report", daemon=True)
            self._thread.start()
        while True:
            if self._failure is not None:
                raise self._failure
            try:
                self._views.put(item, timeout=0.1)
                return
            except queue.Full:
                if not self._thread.is_alive():  # stopped early: no one takes the views
                    if self._failure is not None:
                        raise self._failure from None
                    return

    def _page(self) -> None:
        from rampart_otel.exporters.html_report import write_html_report

        try:
            write_html_report(
                self._runs(),
                self.out,
                title=self.title,
                population=self._population,
                errors=self._errors,
            )
        except BaseException as error:  # given to the scoring thread at its next step
            self._failure = error

    def _runs(self) -> Iterator[dict[str, Any]]:
        while (views := self._views.get()) is not None:
            yield from views

    def _population(self) -> Any:
        if self._closing is None:
            raise RuntimeError("the page read the totals before the last run")
        return self._closing.population()
