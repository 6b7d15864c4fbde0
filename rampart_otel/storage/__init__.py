"""Durable storage of received spans and of the verdicts given on them."""
