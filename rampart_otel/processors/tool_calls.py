"""Tool calls: the requests and executions every convention reports, merged into calls.

The same call reported twice (a model request and an execution span, or two
instrumentations of one call) is ONE call: matched by call id, else by an enclosing
execution span, else by name, arguments and order. Arguments and results a call lacks are
filled from later model requests' message history.
A single argument recorded without its name takes the name of the tool's only parameter.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from rampart_otel.conventions import ToolReport
from rampart_otel.conventions.tool_definitions import tool_parameters
from rampart_otel.model import Span, ToolCall, ToolCallStatus
from rampart_otel.processors.span_views import ClassifiedRun, SpanRecord


@dataclass(frozen=True, slots=True)
class ToolCalls:
    """The run's tool calls, and which span runs which call."""

    calls: list[ToolCall]
    # Span id → index of the call it executes (a plain span named like the call included).
    call_of: Mapping[str, int]
    # Execution spans of traced functions no model asked for: no call, no execution.
    dropped: frozenset[str]
    # Span id → the execution span at or above it (``RunGraph.nearest``).
    owner: Mapping[str, str]

    def executes(self, record: SpanRecord) -> bool:
        """Whether the span is a tool execution (not a traced function no model asked for)."""
        return record.execution is not None and record.span.span_id not in self.dropped

    def call_index(self, record: SpanRecord) -> int | None:
        """The call whose execution span holds ``record`` (or is it)."""
        owner = self.owner.get(record.span.span_id)
        return None if owner is None else self.call_of[owner]

    def execution_spans(self, run: ClassifiedRun) -> list[Span]:
        """The spans that ran a call, one per call (an MCP span inside an execute_tool span
        of the same call is not a second one; the answer tool's is no call)."""
        return [
            view.span
            for view in run.records
            if self.executes(view)
            and view.execution is not None
            and not view.execution.answer
            and self.first_of_call(run, view)
        ]

    def first_of_call(self, run: ClassifiedRun, record: SpanRecord) -> bool:
        """Not a tool span inside another tool span reporting the same call (MCP in
        execute_tool)."""
        parent = run.graph.parent_id(record.span.span_id)
        owner = self.owner.get(parent) if parent is not None else None
        return owner is None or self.call_of[owner] != self.call_of.get(record.span.span_id)


def merge_tool_calls(run: ClassifiedRun) -> ToolCalls:
    """Every tool call of the run, each once, with the spans and conventions that report it.

    Names each execution span's call (``call_of``); an execution no model asked for that
    is only a candidate (a traced function) is no call, and no execution (``dropped``).
    """
    calls = _CallMerger(run)
    dropped = calls.dropped
    for record in run.records:
        if record.output is not None:
            for report in record.output.requests:
                calls.add_request(report, record)
        for report in record.dispatched:
            calls.add_request(report, record, dispatched=True)
        if record.execution is not None and not record.execution.answer:
            index = calls.add_execution(record.execution, record)
            if index is None:
                dropped.add(record.span.span_id)  # a traced function no model asked for
            else:
                calls.call_of[record.span.span_id] = index
    models = [record for record in run.records if record.model]
    calls.fill_from_history(models)
    calls.adopt_history_calls(models)
    calls.adopt_named_spans(run.records, dropped)
    calls.mark_when(models)
    _name_single_arguments(calls.calls, run.records)
    owner = run.graph.nearest(calls.call_of)
    return ToolCalls(calls.calls, calls.call_of, frozenset(dropped), owner)


def _name_single_arguments(calls: list[ToolCall], views: tuple[SpanRecord, ...]) -> None:
    """A call whose argument was recorded as one value without a name (OpenInference JS's
    plain ``input.value`` text) takes the name of its tool's only parameter, when every
    definition of the tool the run's model requests offered has exactly one."""
    unnamed = [c for c in calls if c.arguments_captured and isinstance(c.arguments, str)]
    if not unnamed:
        return
    offered: dict[str, set[tuple[str, ...]]] = {}
    for view in views:
        if view.model:
            for name, parameters in tool_parameters(view.span).items():
                offered.setdefault(name, set()).add(parameters)
    for call in unnamed:
        shapes = offered.get(call.name, set())
        if len(shapes) == 1 and len(only := next(iter(shapes))) == 1:
            call.arguments = {only[0]: call.arguments}


class _CallMerger:
    """Merges reports into calls: by call id, else nested same-name spans, else name and order."""

    def __init__(self, run: ClassifiedRun) -> None:
        self.run = run
        self.call_of: dict[str, int] = {}  # execution span id → call index
        self.dropped: set[str] = set()  # execution spans of no call (``ToolCalls.dropped``)
        self.calls: list[ToolCall] = []
        self._by_id: dict[str, int] = {}
        self._by_name: dict[str, list[int]] = {}
        self._requests: list[list[tuple[SpanRecord, str]]] = []  # (model span, convention)
        self._executed: list[bool] = []
        self._exec_views: list[SpanRecord | None] = []
        self._steps: dict[int, tuple[str, tuple[int, int]]] = {}  # call → (span, steps)
        self._within: set[int] = set()  # calls first requested by a span that dispatched them

    def add_request(self, report: ToolReport, view: SpanRecord, dispatched: bool = False) -> int:
        """``dispatched``: the span hands the call to its tools (runs it inside itself)."""
        index = self._by_id.get(report.call_id) if report.call_id else None
        if index is None:
            index = self._related_request(report, view)
        if index is None:
            index = self._new(report)
        if dispatched and not self._requests[index]:
            self._within.add(index)
        self._merge(index, report)
        self._requests[index].append((view, report.convention))
        call = self.calls[index]
        if report.result_captured and call.status is ToolCallStatus.REQUESTED:
            call.status = ToolCallStatus.EXECUTED  # the span records its result
        return index

    def add_execution(self, report: ToolReport, view: SpanRecord) -> int | None:
        """The call this execution ran; None for a candidate no request waits for."""
        index = self._by_id.get(report.call_id) if report.call_id else None
        if index is None:
            index = self._enclosing_execution(report, view)
        if index is None:
            index = self._first_waiting(report, view)
        if index is None:
            if report.candidate:
                return None
            index = self._new(report)
        self._merge(index, report)
        if self._exec_views[index] is None:
            self._exec_views[index] = view
        call = self.calls[index]
        if report.executed:
            self._executed[index] = True
            if report.error:
                call.status = ToolCallStatus.ERROR
            elif call.status is ToolCallStatus.REQUESTED:
                call.status = ToolCallStatus.EXECUTED
        return index

    def fill_from_history(self, model_views: list[SpanRecord]) -> None:
        """Arguments/results missing on a call, from later model requests' message history."""
        wanted = {
            call.call_id: index
            for index, call in enumerate(self.calls)
            if call.call_id and (not call.arguments_captured or not call.result_captured)
        }
        for view in reversed(model_views):
            if not wanted:
                return
            for convention, (arguments, results, _) in view.history:
                for call_id, value in arguments.items():
                    index = wanted.get(call_id)
                    if index is not None and not self.calls[index].arguments_captured:
                        call = self.calls[index]
                        call.arguments = value
                        call.arguments_captured = True
                        self._seen(call, view.span, convention)
                for call_id, value in results.items():
                    index = wanted.get(call_id)
                    if index is not None and not self.calls[index].result_captured:
                        call = self.calls[index]
                        call.result, call.result_captured = value, True
                        if call.status is ToolCallStatus.REQUESTED:
                            call.status = ToolCallStatus.EXECUTED  # its result went back
                        self._seen(call, view.span, convention)
            wanted = {
                call_id: index
                for call_id, index in wanted.items()
                if not self.calls[index].arguments_captured or not self.calls[index].result_captured
            }

    def adopt_history_calls(self, model_views: list[SpanRecord]) -> None:
        """Calls a model call's input history holds that no span of the run made: the run
        continues a conversation recorded elsewhere, and those calls are evidence of it.

        A history call another call of the run explains (the same name and arguments, under
        another layer's id) is that call, not a new one.
        """
        for view in model_views:
            for convention, history in view.history:
                for call_id in dict.fromkeys([*history.arguments, *history.results]):
                    if call_id in self._by_id:
                        continue
                    name = history.names.get(call_id, "")
                    arguments = history.arguments.get(call_id)
                    captured = call_id in history.arguments
                    if self._explained(name, arguments, captured):
                        continue
                    index = self._new_named(name, view.span.trace_id)
                    call = self.calls[index]
                    call.call_id = call_id
                    self._by_id[call_id] = index
                    call.from_history = True
                    if captured:
                        call.arguments, call.arguments_captured = arguments, True
                    if call_id in history.results:
                        call.result, call.result_captured = history.results[call_id], True
                        call.status = ToolCallStatus.EXECUTED  # its result went back
                    self._seen(call, view.span, convention)

    def _explained(self, name: str, arguments: object, captured: bool) -> bool:
        for index in self._by_name.get(name, ()):
            call = self.calls[index]
            if call.from_history:
                continue
            if not captured or not call.arguments_captured or call.arguments == arguments:
                return True
        return False

    def _new_named(self, name: str, trace_id: str) -> int:
        self.calls.append(
            ToolCall(
                name=name,
                call_id=None,
                arguments=None,
                result=None,
                status=ToolCallStatus.REQUESTED,
                span_ids=[],
                trace_id=trace_id,
                conventions=[],
            )
        )
        self._requests.append([])
        self._executed.append(False)
        self._exec_views.append(None)
        index = len(self.calls) - 1
        self._by_name.setdefault(name, []).append(index)
        return index

    def mark_when(self, model_views: list[SpanRecord]) -> None:
        """Name each call's execution span, its first requesting span (and whether that span
        holds it: the span that dispatched the call, not a model span that asked for it), and
        the first model span whose input sent its result back (``ToolCall.returned_by``)."""
        for index, (call, executed, requests) in enumerate(
            zip(self.calls, self._exec_views, self._requests, strict=True)
        ):
            call.executed_in = executed.span.span_id if executed is not None else None
            call.requested_in = requests[0][0].span.span_id if requests else None
            call.requested_within = index in self._within
            span_id, steps = self._steps.get(index, (None, None))
            if call.requested_within and span_id == call.requested_in:
                call.steps = steps  # read on the span that holds the call
        for view in model_views:  # in time order: the first to send a result back
            for _, history in view.history:
                for call_id in history.results:
                    returned = self._by_id.get(call_id)
                    if returned is None:
                        continue
                    call = self.calls[returned]
                    if call.returned_by is None and view.span.span_id != call.requested_in:
                        call.returned_by = view.span.span_id

    def adopt_named_spans(self, views: tuple[SpanRecord, ...], dropped: set[str]) -> None:
        """A plain span named exactly like a requested call with no execution span holds it.

        Hand-instrumented agents wrap each tool in a span named after the tool, with no
        convention attributes. Such a span is used only to attribute the side effects
        inside it; it is not an execution span for coverage and changes no status.
        """
        for view in views:
            span = view.span
            executes = view.execution is not None and span.span_id not in dropped
            if view.model or view.agent or executes or view.effects or view.in_model:
                continue
            for index in self._by_name.get(span.name, ()):
                call = self.calls[index]
                if self._exec_views[index] is not None:
                    continue
                requests = self._requests[index]
                if requests and (requests[0][0].span.start_ns or 0) <= (span.start_ns or 0):
                    self._exec_views[index] = view
                    self.call_of[span.span_id] = index
                    call.span_ids.append(span.span_id)
                    break

    def _new(self, report: ToolReport) -> int:
        return self._new_named(report.name, report.span.trace_id)

    def _merge(self, index: int, report: ToolReport) -> None:
        call = self.calls[index]
        if report.call_id:
            if call.call_id is None:
                call.call_id = report.call_id
            self._by_id.setdefault(report.call_id, index)  # another layer's id: an alias
        call.name = call.name or report.name
        if call.local_name is None and report.local_name is not None and call.name == report.name:
            call.namespace, call.local_name = report.namespace, report.local_name
        if report.arguments_captured and (
            not call.arguments_captured
            or (isinstance(call.arguments, str) and isinstance(report.arguments, dict))
        ):
            call.arguments, call.arguments_captured = report.arguments, True
        if report.result_captured and not call.result_captured:
            call.result, call.result_captured = report.result, True
        if report.steps is not None:
            self._steps.setdefault(index, (report.span.span_id, report.steps))
        self._seen(call, report.span, report.convention)

    @staticmethod
    def _seen(call: ToolCall, span: Span, convention: str) -> None:
        if span.span_id not in call.span_ids:
            call.span_ids.append(span.span_id)
        if convention not in call.conventions:
            call.conventions.append(convention)

    def _related_request(self, report: ToolReport, view: SpanRecord) -> int | None:
        """The same request, already reported on this model request by another reader.

        The same request is read on the same span by two conventions (no id, or the same
        id), or on a model span nested directly in another: two layers of one model call
        (pydantic-ai's or an agent SDK's span around an instrumented client's span), which
        may even name the call by different ids (a response item id and a call id).
        """
        for index in self._by_name.get(report.name, ()):
            call_id = self.calls[index].call_id
            requests = self._requests[index]
            if any(
                other is view and convention == report.convention for other, convention in requests
            ):
                continue  # this convention on this span already reported that one
            if report.call_id and call_id is not None and call_id != report.call_id:
                if any(
                    self.run.same_model_call(view, other, self.dropped) for other, _ in requests
                ):
                    return index  # two ids of one call: the outer layer's is kept
                continue  # otherwise, two different ids are two calls
            if any(self._related(view, other) for other, _ in requests):
                return index
        return None

    def _enclosing_execution(self, report: ToolReport, view: SpanRecord) -> int | None:
        """The same execution reported by an enclosing tool span (MCP inside execute_tool)."""
        for parent in self.run.ancestors(view):
            index = self.call_of.get(parent.span.span_id)
            if index is not None:
                call = self.calls[index]
                same_id = report.call_id is None or call.call_id in (None, report.call_id)
                return index if same_id and call.name == report.name else None
        return None

    def _first_waiting(self, report: ToolReport, view: SpanRecord) -> int | None:
        """The earliest request of this name not yet executed, asked for before this span;
        of several, the first asked for with the same arguments (parallel calls end in any
        order)."""
        start = view.span.start_ns or 0
        waiting: list[int] = []
        for index in self._by_name.get(report.name, ()):
            call = self.calls[index]
            if self._executed[index] or self._exec_views[index] is not None:
                continue
            if report.call_id and call.call_id not in (None, report.call_id):
                continue
            requests = self._requests[index]
            if requests and (requests[0][0].span.start_ns or 0) <= start:
                waiting.append(index)
        if report.arguments_captured:
            for index in waiting:
                call = self.calls[index]
                if call.arguments_captured and call.arguments == report.arguments:
                    return index
        return waiting[0] if waiting else None

    def _related(self, a: SpanRecord, b: SpanRecord) -> bool:
        run = self.run
        return (
            a is b or b.span.span_id in a.layers or run.is_ancestor(a, b) or run.is_ancestor(b, a)
        )
