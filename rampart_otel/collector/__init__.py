"""The live collector: receivers, durable storage, and scoring of each finished run."""
