"""The git-backed store of events, findings and baselines, and its read index (investigate.md §2-§6)."""
