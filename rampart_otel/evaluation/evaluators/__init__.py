"""Evaluators, one per module, as RAMPART has them.

``algebra``: the Evaluator interface and its strong-Kleene ``&``, ``|``, ``~``; ``settle``:
the central rule every leaf evaluator ends with; ``events``: a leaf's matches as events in
time and the span tree. The leaves: ``tool_called``, ``tool_result``, ``side_effect``,
``response_contains``, ``input_contains``; over their matches: ``before``, ``flows`` and
``counts`` (``at_least``, ``at_most``). ``rampart_otel.evaluation`` exports the public names.
"""
