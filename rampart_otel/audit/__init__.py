"""Audit: query the verdicts a collector stored, re-score history under a new policy
version, and compare two versions' verdicts run by run (``audit``, ``rescore``, ``diff``)."""


class AuditError(Exception):
    """Something the user can fix (a filter, a policy, a data directory): one line, exit 2."""
