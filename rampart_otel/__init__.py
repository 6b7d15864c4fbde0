"""rampart-otel: safety verdicts from agents' OpenTelemetry traces."""

__version__ = "0.1.0"
