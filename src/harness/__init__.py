"""triage-harness: a deterministic tool harness for LLM security-triage agents."""

__version__ = "0.1.0"
