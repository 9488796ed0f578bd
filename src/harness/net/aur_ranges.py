"""The ranges of the [aur] keys, apart from the client so config.py can check them without loading HTTP."""

from __future__ import annotations

# docs/triage.md §1: the ranges of the [aur] keys, the one place they live: config.py builds the [aur] model from
# them, and they are enforced here too so a bad value can never reach the transport.
AUR_RANGES = {
    "min_interval_ms": (0, 10_000),
    "backoff_base_ms": (1, 10_000),
    "max_retries": (0, 5),
    "retry_after_cap_s": (1, 300),
}
