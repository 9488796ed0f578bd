"""Triage: the verdict model, indicator checks and (later) verify, pr, alert and repo_file."""
