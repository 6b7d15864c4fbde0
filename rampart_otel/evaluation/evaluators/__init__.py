"""Evaluators, one per module, as RAMPART has them.

``algebra``: the Evaluator interface and its strong-Kleene ``&``, ``|``, ``~``; ``settle``:
the central rule every leaf evaluator ends with; ``tool_called``, ``side_effect`` and
``response_contains``: the leaves. ``rampart_otel.evaluation`` exports the public names.
"""
