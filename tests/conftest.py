"""Puts tests/ on sys.path, so shared helpers import by module name (``span_factory``)."""

# The plugin's tests and the README's pytest example drive pytest itself.
pytest_plugins = ["pytester"]
