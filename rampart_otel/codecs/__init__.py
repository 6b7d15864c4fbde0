"""OTLP trace data to and from the plain model: JSON and protobuf, decode and encode."""
