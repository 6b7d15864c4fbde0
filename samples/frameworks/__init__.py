"""Recorders of real agent frameworks' traces: one folder per framework (see README.md)."""
