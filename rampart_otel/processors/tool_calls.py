"""Tool calls: the requests and executions every convention reports, merged into calls.

The same call reported twice (a model request and an execution span, or two
instrumentations of one call) is ONE call: matched by call id, else by an enclosing
execution span, else by name, arguments and order. Arguments and results a call lacks are
filled from later model requests' message history.
A single argument recorded without its name takes the name of the tool's only parameter.
"""

from __future__ import annotations

from bisect import bisect_right, insort
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass

from rampart_otel.conventions import ToolReport
from rampart_otel.conventions.pseudo_tools import PseudoTool, pseudo_tool
from rampart_otel.conventions.tool_definitions import tool_parameters
from rampart_otel.frozen import quick_init
from rampart_otel.model import Span, ToolCall, ToolCallStatus
from rampart_otel.processors.span_views import ClassifiedRun, SpanRecord, inside
from rampart_otel.run_graph import RunGraph


@quick_init
@dataclass(frozen=True, slots=True)
class ToolCalls:
    """The run's tool calls, and which span runs which call: plain data, made once by
    ``merge_tool_calls`` and read by every later job."""

    calls: list[ToolCall]
    # Span id → index of the call it executes (a plain span named like the call included).
    call_of: Mapping[str, int]
    # Execution spans of traced functions no model asked for: no call, no execution.
    dropped: frozenset[str]
    # Span id → the execution span at or above it (``RunGraph.nearest``).
    owner: Mapping[str, str]
    # Span id → index of the call whose execution span holds the span (or is it).
    call_at: Mapping[str, int]
    # Span ids of the spans that execute a call (not a traced function no model asked for).
    executing: frozenset[str]
    # The spans that ran a call, one per call (an MCP span inside an execute_tool span of
    # the same call is not a second one; the answer tool's is no call), in time order.
    execution_spans: tuple[Span, ...]
    # A model span's other spans of its model call but those under it are its layers and
    # the model spans above it up to its call's highest one (no agent and no span that ran
    # a call between): what a job keeping one reading per model call compares it with,
    # instead of every other model span (a long session has thousands). Model span id →
    # the next model span above it in its call (none for the highest), and → the highest.
    model_above: Mapping[str, str]
    call_top: Mapping[str, str]
    # Call index → the framework's pseudo-tool row its execution span matches (a hand-off,
    # a delegation, the answer tool: ``conventions.pseudo_tools``), for the calls that ran.
    pseudo_tools: Mapping[int, PseudoTool]


def merge_tool_calls(run: ClassifiedRun) -> ToolCalls:
    """Every tool call of the run, each once, with the spans and conventions that report it.

    Names each execution span's call (``call_of``); an execution no model asked for that
    is only a candidate (a traced function) is no call, and no execution (``dropped``).
    """
    calls = _CallMerger(run)
    dropped = calls.dropped
    turns = calls.turns
    models: list[SpanRecord] = []
    executions: list[SpanRecord] = []  # the spans that execute a call (or the answer tool)
    for record in run.records:
        span = record.span
        if record.model:
            turns[span.trace_id] = span.span_id  # reports read from here on are its turn's
            models.append(record)
        if record.output is not None:
            for report in record.output.requests:
                calls.add_request(report, record)
        for report in record.dispatched:
            calls.add_request(report, record, dispatched=True)
        execution = record.execution
        if execution is None:
            continue
        if not execution.answer:
            index = calls.add_execution(execution, record)
            if index is None:
                dropped.add(span.span_id)  # a traced function no model asked for: no call
                continue
            calls.call_of[span.span_id] = index
        executions.append(record)
    calls.fill_from_history(models)
    calls.adopt_history_calls(models)
    calls.adopt_named_spans(run.records, dropped)
    calls.adopt_code_steps()
    calls.mark_when(models)
    calls.mark_ambiguous()
    owner = run.graph.nearest(calls.call_of)
    call_of = calls.call_of
    call_at = {span_id: call_of[found] for span_id, found in owner.items()}
    executing = frozenset([record.span.span_id for record in executions])
    execution_spans = _execution_spans(run.graph, executions, call_of, call_at)
    model_above, call_top = _model_calls(run, executing)
    _name_single_arguments(calls.calls, run.records)
    pseudo = {
        index: row
        for index, call in enumerate(calls.calls)
        if call.executed_in
        and (runs := run.record(call.executed_in)) is not None
        and (row := pseudo_tool(call.name, runs.span)) is not None
    }
    return ToolCalls(
        calls.calls,
        call_of,
        frozenset(dropped),
        owner,
        call_at,
        executing,
        execution_spans,
        model_above,
        call_top,
        pseudo,
    )


def _execution_spans(
    graph: RunGraph,
    executions: list[SpanRecord],
    call_of: Mapping[str, int],
    call_at: Mapping[str, int],
) -> tuple[Span, ...]:
    """The spans that ran a call, one per call (of ``executions``, the spans executing a
    call or the answer tool, in the run's order): not the answer tool's, and not a tool
    span inside another tool span reporting the same call (MCP in execute_tool)."""
    found: list[Span] = []
    for record in executions:
        span_id = record.span.span_id
        if record.execution is None or record.execution.answer:
            continue
        parent = graph.parent_id(span_id)
        above = call_at.get(parent) if parent is not None else None
        if above is None or above != call_of.get(span_id):
            found.append(record.span)
    return tuple(found)


def _model_calls(
    run: ClassifiedRun, executing: frozenset[str]
) -> tuple[dict[str, str], dict[str, str]]:
    """Each model span's next model span above it in its model call, and its call's highest
    model span (``ToolCalls.model_above``, ``ToolCalls.call_top``): the nearest span above
    a model span that is a model span, an agent or a span that ran a call decides, found
    in one sweep of those spans in depth-first order (``SpanRecord.tour``: the spans still
    open are the ones above)."""
    above_of: dict[str, str] = {}
    top: dict[str, str] = {}
    marked = sorted(
        [
            (view.tour[0], view)
            for view in run.records
            if view.model or view.agent or view.span.span_id in executing
        ],
        key=_first,
    )
    around: list[SpanRecord] = []  # the marked spans above the one at hand, innermost last
    for first, view in marked:
        while around and around[-1].tour[1] < first:
            around.pop()
        if view.model:
            span_id = view.span.span_id
            nearest = around[-1] if around else None
            if nearest is None or not nearest.model:  # none above, or an agent or call between
                top[span_id] = span_id
            else:
                above = nearest.span.span_id
                above_of[span_id] = above
                stops = nearest.agent or above in executing
                top[span_id] = above if stops else top[above]
        around.append(view)
    return above_of, top


def _first(item: tuple[int, SpanRecord]) -> int:
    return item[0]


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
    """Merges reports into calls: by call id, else nested same-name spans, else name and order.

    Every lookup goes through an index, so merging is linear in the reports (times the
    depth of the span tree): requests by (tool, span) and by (tool, span above), the calls
    asked for and not yet run by tool (and by arguments), each id's call.
    """

    def __init__(self, run: ClassifiedRun) -> None:
        self.run = run
        # Each span's place in the reading order, and the latest place of a span above it:
        # a span above is read first but where a clock ran behind.
        self._position = {record.span.span_id: n for n, record in enumerate(run.records)}
        self._later_above: dict[str, int] = {}  # span id → latest place above it (memo)
        self.call_of: dict[str, int] = {}  # execution span id → call index
        self.dropped: set[str] = set()  # execution spans of no call (``ToolCalls.dropped``)
        self.calls: list[ToolCall] = []
        # Call id → the calls that claim it, in the order they did (and when): one, but for
        # ids a provider numbers per turn (``call_0`` each turn) or two tools share.
        self._by_id: dict[str, list[int]] = {}
        self._claimed_at: dict[str, list[int]] = {}  # call id → start of each claim's span
        self._ids: list[set[str]] = []  # each call's ids
        self._claim_turns: dict[str, list[str]] = {}  # call id → each claim's model turn
        self._shared: set[str] = set()  # ids calls of different tools claim
        self._ambiguous: set[str] = set()  # ...in one model turn: which call is which?
        self.turns: dict[str, str] = {}  # trace id → its latest model span read so far
        self._asked_by_model: list[bool] = []  # each call: a model span asked for it
        self._unasked: dict[str, list[int]] = {}  # call id → claims no model span asked for
        self._by_key: dict[str, set[str]] = {}  # ``_tool_key`` → the names asked for
        self._by_name: dict[str, list[int]] = {}
        self._requests: list[list[tuple[SpanRecord, str]]] = []  # (model span, convention)
        self._executed: list[bool] = []
        self._exec_views: list[SpanRecord | None] = []
        self._steps: dict[int, tuple[str, tuple[int, int]]] = {}  # call → (span, steps)
        self._within: set[int] = set()  # calls first requested by a span that dispatched them
        self._names: list[str] = []  # each call's name when it was made (its ``_by_name`` key)
        self._span_ids: list[set[str]] = []  # each call's ``span_ids``, to look up
        # (name, span id) → calls of that name requested on the span, and under it.
        self._on_span: dict[tuple[str, str], dict[int, None]] = {}
        self._below: dict[tuple[str, str], list[int]] = {}
        self._waiting: dict[str, _Waiting] = {}  # name → calls asked for, not yet run

    def add_request(self, report: ToolReport, view: SpanRecord, dispatched: bool = False) -> int:
        """``dispatched``: the span hands the call to its tools (runs it inside itself)."""
        index = self._claimed_request(report, view) if report.call_id else None
        if index is None:
            index = self._related_request(report, view)
        if index is None:
            index = self._new(report)
        if dispatched and not self._requests[index]:
            self._within.add(index)
        self._merge(index, report)
        self._add_request_view(index, view, report.convention)
        call = self.calls[index]
        if report.result_captured and call.status is ToolCallStatus.REQUESTED:
            call.status = ToolCallStatus.EXECUTED  # the span records its result
        return index

    def _add_request_view(self, index: int, view: SpanRecord, convention: str) -> None:
        requests = self._requests[index]
        if not requests and not self._executed[index] and self._exec_views[index] is None:
            self._waiting.setdefault(self._names[index], _Waiting()).open(self.calls[index], index)
        requests.append((view, convention))
        self._asked_by_model[index] = self._asked_by_model[index] or view.model
        name, span_id = self._names[index], view.span.span_id
        on_span = self._on_span.setdefault((name, span_id), {})
        if index not in on_span:
            on_span[index] = None
            if (
                _latest_above(self.run.graph, self._position, self._later_above, span_id)
                > (self._position[span_id])
            ):
                self._file_below(index, name, span_id)

    def _file_below(self, index: int, name: str, span_id: str) -> None:
        """The request is read before a span above it (a clock that ran behind): filed
        under each such span, whose own requests look for it there (``_below``)."""
        here = self._position[span_id]
        for above in self.run.graph.ancestors(span_id):
            if self._position[above.span_id] > here:
                below = self._below.setdefault((name, above.span_id), [])
                if not below or below[-1] != index:
                    below.append(index)

    def add_execution(self, report: ToolReport, view: SpanRecord) -> int | None:
        """The call this execution ran; None for a candidate no request waits for."""
        index = self._claimed_execution(report, view) if report.call_id else None
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
            self._ran(index)
        call = self.calls[index]
        if report.executed:
            self._executed[index] = True
            self._ran(index)
            if report.error:
                call.status = ToolCallStatus.ERROR
            elif call.status is ToolCallStatus.REQUESTED:
                call.status = ToolCallStatus.EXECUTED
        return index

    def _ran(self, index: int) -> None:
        waiting = self._waiting.get(self._names[index])
        if waiting is not None:
            waiting.close(index)

    def fill_from_history(self, model_views: list[SpanRecord]) -> None:
        """Arguments/results missing on a call, from later model requests' message history."""
        missing = {
            index
            for index, call in enumerate(self.calls)
            if call.call_id and (not call.arguments_captured or not call.result_captured)
        }
        wanted = {call_id for index in missing if (call_id := self.calls[index].call_id)}
        calls = self.calls
        for view in reversed(model_views):
            if not missing:
                return
            for convention, (arguments, results, names) in view.history:
                for call_id, value in arguments.items():
                    index = self._wanted(call_id, names.get(call_id), view, wanted)
                    if index is not None and not calls[index].arguments_captured:
                        call = calls[index]
                        call.arguments = value
                        call.arguments_captured = True
                        self._seen(index, view.span, convention)
                        if call.result_captured:
                            missing.discard(index)
                for call_id, value in results.items():
                    index = self._wanted(call_id, names.get(call_id), view, wanted)
                    if index is not None and not calls[index].result_captured:
                        call = calls[index]
                        call.result, call.result_captured = value, True
                        if call.status is ToolCallStatus.REQUESTED:
                            call.status = ToolCallStatus.EXECUTED  # its result went back
                        self._seen(index, view.span, convention)
                        if call.arguments_captured:
                            missing.discard(index)

    def _wanted(
        self, call_id: str, name: str | None, view: SpanRecord, wanted: set[str]
    ) -> int | None:
        """The call whose own id a history entry names, if it was missing anything."""
        if call_id not in wanted:
            return None
        index = self._history_call(call_id, name, view)
        return index if index is not None and self.calls[index].call_id == call_id else None

    def adopt_history_calls(self, model_views: list[SpanRecord]) -> None:
        """Calls a model call's input history holds that no span of the run made: the run
        continues a conversation recorded elsewhere, and those calls are evidence of it.

        A history call another call of the run explains (the same name and arguments, under
        another layer's id) is that call, not a new one.
        """
        explains: _Explainers | None = None  # made when a history call is not the run's
        for view in model_views:
            for convention, history in view.history:
                for call_id in dict.fromkeys([*history.arguments, *history.results]):
                    if call_id in self._by_id:
                        continue
                    name = history.names.get(call_id, "")
                    arguments = history.arguments.get(call_id)
                    captured = call_id in history.arguments
                    if explains is None:
                        explains = _Explainers(self.calls, self._names)
                    if explains.explained(name, arguments, captured):
                        continue
                    index = self._new_named(name, view.span.trace_id)
                    call = self.calls[index]
                    call.call_id = call_id
                    self._claim(call_id, index, view.span)
                    call.from_history = True
                    if captured:
                        call.arguments, call.arguments_captured = arguments, True
                    if call_id in history.results:
                        call.result, call.result_captured = history.results[call_id], True
                        call.status = ToolCallStatus.EXECUTED  # its result went back
                    self._seen(index, view.span, convention)

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
        self._names.append(name)
        self._span_ids.append(set())
        self._ids.append(set())
        self._asked_by_model.append(False)
        index = len(self.calls) - 1
        self._by_name.setdefault(name, []).append(index)
        self._by_key.setdefault(_tool_key(name), set()).add(name)
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
                    returned = self._history_call(call_id, history.names.get(call_id), view)
                    if returned is None:
                        continue
                    call = self.calls[returned]
                    if call.returned_by is None and view.span.span_id != call.requested_in:
                        call.returned_by = view.span.span_id

    def adopt_code_steps(self) -> None:
        """A code agent's call of its code (``python_interpreter``) ran in the step span its
        model span sits in (``SpanReport.code_step``): that span is its execution, so the
        code's own I/O is the call's, and the tools the code called nest under it."""
        for index, requests in enumerate(self._requests):
            if self._exec_views[index] is not None or not requests:
                continue
            model = requests[0][0]
            parent_id = self.run.graph.parent_id(model.span.span_id)
            step = self.run.record(parent_id) if parent_id is not None else None
            if step is None or not step.reading.code_step or step.span.span_id in self.call_of:
                continue
            call = self.calls[index]
            self._exec_views[index] = step
            self._executed[index] = True
            self.call_of[step.span.span_id] = index
            call.span_ids.append(step.span.span_id)
            if call.status is ToolCallStatus.REQUESTED:
                call.status = ToolCallStatus.EXECUTED  # the step ran it

    def adopt_named_spans(self, views: tuple[SpanRecord, ...], dropped: set[str]) -> None:
        """A plain span named exactly like a requested call with no execution span holds it.

        Hand-instrumented agents wrap each tool in a span named after the tool, with no
        convention attributes. Such a span is used only to attribute the side effects
        inside it; it is not an execution span for coverage and changes no status.
        """
        unheld: dict[str, list[int]] = {}  # name → requested calls with no execution span
        for name, made in self._by_name.items():
            kept = [i for i in made if self._exec_views[i] is None and self._requests[i]]
            if kept:
                unheld[name] = kept
        if not unheld:
            return
        heads = dict.fromkeys(unheld, 0)  # calls before a name's head hold a span already
        for view in views:
            span = view.span
            held = unheld.get(span.name)
            if held is None:
                continue
            indexes = held
            executes = view.execution is not None and span.span_id not in dropped
            if view.model or view.agent or executes or view.effects or view.in_model:
                continue
            start = span.start_ns or 0
            for position in range(heads[span.name], len(indexes)):
                index = indexes[position]
                if self._exec_views[index] is not None:
                    continue
                if (self._requests[index][0][0].span.start_ns or 0) > start:
                    break  # asked for after the span began, as is every later call of it
                self._exec_views[index] = view
                self.call_of[span.span_id] = index
                self.calls[index].span_ids.append(span.span_id)
                while (
                    heads[span.name] < len(indexes)
                    and self._exec_views[indexes[heads[span.name]]] is not None
                ):
                    heads[span.name] += 1
                break

    def _new(self, report: ToolReport) -> int:
        return self._new_named(report.name, report.span.trace_id)

    def _merge(self, index: int, report: ToolReport) -> None:
        call = self.calls[index]
        if report.call_id:
            if call.call_id is None:
                call.call_id = report.call_id
            self._claim(report.call_id, index, report.span)  # another layer's id: an alias
        call.name = call.name or report.name
        if call.local_name is None and report.local_name is not None and call.name == report.name:
            call.namespace, call.local_name = report.namespace, report.local_name
        if report.arguments_captured and (
            not call.arguments_captured
            or (isinstance(call.arguments, str) and isinstance(report.arguments, dict))
        ):
            call.arguments, call.arguments_captured = report.arguments, True
            waiting = self._waiting.get(self._names[index])
            if waiting is not None:
                waiting.argued(index, call.arguments)
        if report.result_captured and not call.result_captured:
            call.result, call.result_captured = report.result, True
        if report.steps is not None:
            self._steps.setdefault(index, (report.span.span_id, report.steps))
        call.agent_tool = call.agent_tool or report.agent_tool
        self._seen(index, report.span, report.convention)

    def _seen(self, index: int, span: Span, convention: str) -> None:
        call = self.calls[index]
        seen = self._span_ids[index]
        if span.span_id not in seen:
            seen.add(span.span_id)
            call.span_ids.append(span.span_id)
        if convention not in call.conventions:
            call.conventions.append(convention)

    def _claim(self, call_id: str, index: int, span: Span) -> None:
        """The call claims the id (its own, or another layer's alias of it)."""
        if call_id in self._ids[index]:
            return
        self._ids[index].add(call_id)
        claims = self._by_id.setdefault(call_id, [])
        claims.append(index)
        if not self._asked_by_model[index]:
            self._unasked.setdefault(call_id, []).append(index)
        self._claimed_at.setdefault(call_id, []).append(span.start_ns or 0)
        self._claim_turns.setdefault(call_id, []).append(self.turns.get(span.trace_id, ""))
        if len(claims) > 1 and call_id not in self._shared:
            name = self.calls[index].name
            if any(not _same_tool(self.calls[i], name, None) for i in claims[:-1]):
                self._shared.add(call_id)

    def mark_ambiguous(self) -> None:
        """An id calls of two tools claim is ambiguous where one model turn holds both
        claims: a call's turn is the model span that asked for it, else the latest model
        span of its trace before it ran. Claims in turns of their own are a provider
        numbering calls per turn (``call_0`` each turn): each turn says which call is which.
        """
        if not self._shared:
            return
        for call_id in self._shared:
            tools: dict[str, str] = {}  # turn → the tool claiming the id in it
            for index, turn in zip(self._by_id[call_id], self._claim_turns[call_id], strict=True):
                asked = next((view for view, _ in self._requests[index] if view.model), None)
                key = asked.span.span_id if asked is not None else turn
                if tools.setdefault(key, _tool_key(self.calls[index].name)) != _tool_key(
                    self.calls[index].name
                ):
                    self._ambiguous.add(call_id)
                    break
        for index, call in enumerate(self.calls):
            shared = self._ids[index] & self._ambiguous
            if shared:
                call.ambiguous_id = min(shared)

    def _claimed_request(self, report: ToolReport, view: SpanRecord) -> int | None:
        """The call a request's id names: a call of the same tool that claims it, asked for
        in this model turn (on this span, a layer, a span above or under it) or by no
        model span yet. A model span asking by an id another turn used asks anew (ids a
        provider numbers per turn); a call of another tool is never this one."""
        claims = self._by_id.get(report.call_id or "")
        if not claims:
            return None
        calls = self.calls
        if not view.model:  # an agent's or framework's record of the calls it ran
            return next((i for i in claims if _same_tool(calls[i], report.name, report)), None)
        if len(claims) == 1:
            index = claims[0]
            if _same_tool(calls[index], report.name, report) and not self._other_turn(index, view):
                return index
            return None
        call_id = report.call_id or ""
        ids = self._ids
        found = [i for i in self._requested_near(report.name, view) if call_id in ids[i]]
        unasked = self._unasked.get(call_id, [])
        unasked[:] = [i for i in unasked if not self._asked_by_model[i]]
        found += unasked
        return min((i for i in found if _same_tool(calls[i], report.name, report)), default=None)

    def _other_turn(self, index: int, view: SpanRecord) -> bool:
        """The call was asked for by a model span that is not this model turn's."""
        return any(
            other.model and not self._related(view, other) for other, _ in self._requests[index]
        )

    def _claimed_execution(self, report: ToolReport, view: SpanRecord) -> int | None:
        """The call an execution's id names: of the calls of the same tool claiming it, the
        latest one claimed before the execution began (its own turn's), else the first.
        None when only calls of other tools claim it: the id is then ambiguous."""
        claims = self._by_id.get(report.call_id or "")
        if not claims:
            return None
        calls = self.calls
        start = view.span.start_ns or 0
        at = self._claimed_at[report.call_id or ""]
        for position in range(bisect_right(at, start) - 1, -1, -1):
            index = claims[position]
            if _same_tool(calls[index], report.name, report):
                return index
        return next((i for i in claims if _same_tool(calls[i], report.name, report)), None)

    def _history_call(self, call_id: str, name: str | None, view: SpanRecord) -> int | None:
        """The call a model span's history names by ``call_id`` (and tool ``name``): the
        one claiming the id, or of several, the latest of that tool claimed before it."""
        claims = self._by_id.get(call_id)
        if not claims:
            return None
        if len(claims) == 1:
            return claims[0]
        start = view.span.start_ns or 0
        at = self._claimed_at[call_id]
        for position in range(bisect_right(at, start) - 1, -1, -1):
            index = claims[position]
            if not name or _same_tool(self.calls[index], name, None):
                return index
        return None

    def _related_request(self, report: ToolReport, view: SpanRecord) -> int | None:
        """The same request, already reported on this model request by another reader.

        The same request is read on the same span by two conventions (no id, or the same
        id), or on a model span nested directly in another: two layers of one model call
        (pydantic-ai's or an agent SDK's span around an instrumented client's span), which
        may even name the call by different ids (a response item id and a call id).
        Only calls requested on this span, a layer of it, a span above it or one under it
        can be (``_on_span``, ``_below``): the first of those that is, in call order.
        """
        for index in self._requested_near(report.name, view):
            call_id = self.calls[index].call_id
            requests = self._requests[index]
            if any(
                other is view and convention == report.convention for other, convention in requests
            ):
                continue  # this convention on this span already reported that one
            if report.call_id and call_id is not None and call_id != report.call_id:
                if any(self._one_model_call(view, other) for other, _ in requests):
                    return index  # two ids of one call: the outer layer's is kept
                continue  # otherwise, two different ids are two calls
            if any(self._related(view, other) for other, _ in requests):
                return index
        return None

    def _requested_near(self, name: str, view: SpanRecord) -> list[int]:
        """Calls of ``name`` requested on ``view``, a layer of it, a span above or under it,
        in call order."""
        span_id = view.span.span_id
        found: list[int] = [*self._on_span.get((name, span_id), ())]
        found += self._below.get((name, span_id), ())
        for layer in view.layers:
            found += self._on_span.get((name, layer), ())
        for above in self.run.graph.ancestors(span_id):
            found += self._on_span.get((name, above.span_id), ())
        return sorted(set(found)) if len(found) > 1 else found

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
        waiting = self._waiting.get(report.name)
        if waiting is None and report.name not in self._by_name:
            waiting = self._waiting.get(self._alike(report.name) or report.name)
        if waiting is None:
            return None
        start = view.span.start_ns or 0
        calls, requests = self.calls, self._requests

        def fits(index: int) -> bool:
            call_id = calls[index].call_id
            return (not report.call_id or call_id in (None, report.call_id)) and (
                requests[index][0][0].span.start_ns or 0
            ) <= start

        if report.arguments_captured:
            same = waiting.first_argued(report.arguments, fits, calls)
            if same is not None:
                return same
        return waiting.first(fits, anonymous=bool(report.call_id), calls=calls)

    def _alike(self, name: str) -> str:
        """The one name asked for that differs from ``name`` only by case, spaces and
        underscores (CrewAI's tool span ``Delegate work to coworker`` runs the model's
        ``delegate_work_to_coworker``); "" when there is none, or several."""
        alike = self._by_key.get(_tool_key(name), set())
        return next(iter(alike)) if len(alike) == 1 else ""

    def _related(self, a: SpanRecord, b: SpanRecord) -> bool:
        return (
            a is b or b.span.span_id in a.layers or inside(a.tour, b.tour) or inside(b.tour, a.tour)
        )

    def _one_model_call(self, a: SpanRecord, b: SpanRecord) -> bool:
        """Two model spans of one call: layers of it, or one inside the other with no agent
        span and no span that ran a call between them. Asked while merging, so a traced
        function no model asked for (``dropped``, decided so far) is no tool span here."""
        if a is b or not (a.model and b.model):
            return False
        if b.span.span_id in a.layers:
            return True
        inner, outer = (a, b) if inside(a.tour, b.tour) else (b, a)
        if not inside(inner.tour, outer.tour):
            return False
        for current in self.run.ancestors(inner):
            if current is outer:
                return True
            if current.agent or (
                current.execution is not None and current.span.span_id not in self.dropped
            ):
                return False
        return False


class _Waiting:
    """The calls of one name that were asked for and have not run yet, in call order (the
    order they were first asked for, which is time order), and by their arguments.

    Each list is read from a head that only moves on past calls that ran, so finding the
    first call waiting costs nothing per call that ran before it.
    """

    __slots__ = ("_all", "_anonymous", "_argued", "_by_arguments", "_heads", "_open", "_unfrozen")

    def __init__(self) -> None:
        self._all: list[int] = []
        self._anonymous: list[int] = []  # those with no call id when first asked for
        self._heads = [0, 0]  # the first position in each list that may still wait
        self._open: set[int] = set()
        self._argued: list[tuple[int, object]] = []  # captured, not yet filed (below)
        self._by_arguments: dict[Hashable, list[int]] = {}  # captured arguments → calls
        self._unfrozen: list[int] = []  # calls whose arguments have no hashable form

    def open(self, call: ToolCall, index: int) -> None:
        self._open.add(index)
        self._all.append(index)
        if call.call_id is None:
            self._anonymous.append(index)
        if call.arguments_captured:
            self.argued(index, call.arguments)

    def close(self, index: int) -> None:
        self._open.discard(index)

    def argued(self, index: int, arguments: object) -> None:
        """The waiting call's arguments were captured (or replaced): filed under them when
        an execution first looks by arguments (most are paired by call id, never looked up)."""
        if index in self._open:
            self._argued.append((index, arguments))

    def first(
        self, fits: Callable[[int], bool], anonymous: bool, calls: list[ToolCall]
    ) -> int | None:
        """The first waiting call that ``fits`` (``anonymous``: of those with no call id)."""
        which = 1 if anonymous else 0
        entries = self._all if which == 0 else self._anonymous
        head, still = self._heads[which], self._open
        while head < len(entries) and (
            entries[head] not in still or (anonymous and calls[entries[head]].call_id)
        ):
            head += 1  # ran, or (for an id-less call) was given an id since
        self._heads[which] = head
        for position in range(head, len(entries)):
            index = entries[position]
            if index in still and fits(index):
                return index
        return None

    def first_argued(
        self, arguments: object, fits: Callable[[int], bool], calls: list[ToolCall]
    ) -> int | None:
        """The first waiting call that ``fits``, asked for with these very arguments."""
        for index, argued in self._argued:
            filed = _frozen(argued)
            insort(
                self._unfrozen if filed is None else self._by_arguments.setdefault(filed, []), index
            )
        self._argued = []
        key = _frozen(arguments)
        if key is None:
            pool = [i for filed in self._by_arguments.values() for i in filed]
        else:
            pool = list(self._by_arguments.get(key, ()))
        for index in sorted({*pool, *self._unfrozen}):
            call = calls[index]
            if (
                index in self._open
                and call.arguments_captured
                and call.arguments == arguments
                and fits(index)
            ):
                return index
        return None


class _Explainers:
    """The run's own calls by the name they were made under, to tell whether a history call
    is one of them: any of that name when the history has no arguments, else one without
    captured arguments or with the same ones."""

    def __init__(self, calls: list[ToolCall], names: list[str]) -> None:
        self.named: set[str] = set()
        self.unargued: set[str] = set()
        self.frozen: set[tuple[str, Hashable]] = set()
        self.argued: dict[str, list[ToolCall]] = {}  # every call with captured arguments
        self.unfrozen: dict[str, list[ToolCall]] = {}  # ...whose arguments have no key
        for call, name in zip(calls, names, strict=True):
            if call.from_history:
                continue
            self.named.add(name)
            if not call.arguments_captured:
                self.unargued.add(name)
                continue
            self.argued.setdefault(name, []).append(call)
            key = _frozen(call.arguments)
            if key is None:
                self.unfrozen.setdefault(name, []).append(call)
            else:
                self.frozen.add((name, key))

    def explained(self, name: str, arguments: object, captured: bool) -> bool:
        if name not in self.named:
            return False
        if not captured or name in self.unargued:
            return True
        key = _frozen(arguments)
        if key is not None and (name, key) in self.frozen:
            return True
        others = self.argued if key is None else self.unfrozen
        return any(call.arguments == arguments for call in others.get(name, ()))


def _latest_above(
    graph: RunGraph, position: Mapping[str, int], memo: dict[str, int], span_id: str
) -> int:
    """The latest reading place (``position``) of a span above ``span_id``; -1 for a root.
    ``memo`` keeps every span's answer found on the way: each parent link followed once."""
    chain: list[str] = []
    current = span_id
    while current not in memo:
        parent = graph.parent_id(current)
        if parent is None:
            memo[current] = -1
            break
        chain.append(current)
        current = parent
    for node in reversed(chain):
        parent = graph.parent_id(node) or ""
        memo[node] = max(position.get(parent, -1), memo[parent])
    return memo[span_id]


def _tool_key(name: str) -> str:
    """A tool's name with case, spaces and underscores left out: how frameworks vary it."""
    return name.casefold().replace(" ", "").replace("_", "")


def _same_tool(call: ToolCall, name: str, report: ToolReport | None) -> bool:
    """Whether a report of ``name`` can be of ``call``'s tool: the same name but for case,
    spaces and underscores, or a qualified name's own part (Semantic Kernel's
    ``<plugin>-<function>``); a report or call without a name can be of any."""
    if not name or not call.name or name == call.name:
        return True
    ours = {_tool_key(n) for n in call.names}
    theirs = {_tool_key(name)}
    if report is not None and report.local_name:
        theirs.add(_tool_key(report.local_name))
    return not ours.isdisjoint(theirs)


def _frozen(value: object) -> Hashable | None:
    """A hashable stand-in for a JSON-like value that is equal exactly when the values are
    (``==``, so ``1``, ``1.0`` and ``True`` are one); None when it has no such form."""
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if isinstance(value, dict):
        items = []
        for key, item in value.items():
            frozen = _frozen(item)
            if frozen is None and item is not None:
                return None
            items.append((key, frozen))
        try:
            return ("dict", frozenset(items))
        except TypeError:
            return None
    if isinstance(value, list | tuple):
        parts = []
        for item in value:
            frozen = _frozen(item)
            if frozen is None and item is not None:
                return None
            parts.append(frozen)
        return (type(value).__name__, tuple(parts))
    return None
