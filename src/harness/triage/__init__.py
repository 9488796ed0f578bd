"""Triage: the verdict schema, its strict reader, shared name patterns and indicator checks."""
