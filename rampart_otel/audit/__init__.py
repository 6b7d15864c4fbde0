"""Audit: query the verdicts a collector stored, re-score history under a new policy
version, and compare two versions' verdicts run by run (``audit``, ``rescore``, ``diff``)."""
