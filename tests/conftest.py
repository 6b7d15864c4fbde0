"""Puts tests/ on sys.path, so shared helpers import by module name (``span_factory``)."""
