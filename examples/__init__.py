"""Runnable examples of instrumenting your own agent (README, "Instrumenting your own agent")."""
