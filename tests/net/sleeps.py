"""A recording stand-in for `time.sleep`, so retry and backoff tests run instantly."""

from __future__ import annotations


class SleepRecorder:
    """An injected `sleep` that records the delays it is asked for and returns at once."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)
