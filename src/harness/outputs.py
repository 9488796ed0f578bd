"""The known-secret filter at the process's output boundary: every text written to stdout and stderr passes it.

The process redactor is set once the configuration is loaded (`use_redactor`); before that, or when the
configuration cannot be loaded, a redactor over the environment's secret values stands in, so even a usage or
configuration error never echoes a configured secret (docs/decisions.md, "Secrets in output and logs").
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from harness.text.redact import Redactor
    from harness.text.redact_known import KnownMatcher

_lock = threading.Lock()
_redactor: Redactor | None = None
# Until a redactor is set, output needs only the environment's values: `harness --help` then loads no shape rules.
_environment: KnownMatcher | None = None


def use_redactor(redactor: Redactor | None) -> None:
    """Filter output and log lines with the process's redactor from now on; None: the environment's, built anew
    on first use (each CLI invocation starts so, since the environment may have changed in-process)."""
    global _redactor, _environment
    with _lock:
        _redactor = redactor
        _environment = None


def current_redactor() -> Redactor:
    """The process redactor, or one over the environment's secret values until the configuration is loaded."""
    global _redactor
    with _lock:
        if _redactor is None:
            from harness.context import environment_redactor

            _redactor = environment_redactor()
        return _redactor


def filter_text(text: str) -> str:
    """The one known-secret filter of text leaving the process."""
    global _environment
    with _lock:
        redactor = _redactor
        if redactor is None and _environment is None:
            from harness.config import process_environment
            from harness.text.redact_known import KnownMatcher, KnownSecrets

            _environment = KnownMatcher(KnownSecrets.from_environment(process_environment()).bounded_patterns())
        environment = _environment
    if redactor is not None:
        return redactor.redact_known(text)
    assert environment is not None
    return environment.redact(text)


class FilteredStream:
    """A text stream whose every `write` passes `filter_text`; everything else is the wrapped stream's.

    Writers hand over whole units (click writes a message and its newline in one call, the log handler a whole
    record), so a value is never split across two writes.
    """

    def __init__(self, stream: TextIO) -> None:
        self.wrapped = stream

    def write(self, text: str) -> int:
        self.wrapped.write(filter_text(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.wrapped, name)


@contextmanager
def filtered_std_streams() -> Iterator[None]:
    """sys.stdout and sys.stderr filtered for the duration (not wrapped twice when nested), starting from the
    environment's redactor until the configuration sets the process's."""
    use_redactor(None)
    saved = sys.stdout, sys.stderr
    if not isinstance(sys.stdout, FilteredStream):
        sys.stdout = FilteredStream(sys.stdout)  # type: ignore[assignment]
    if not isinstance(sys.stderr, FilteredStream):
        sys.stderr = FilteredStream(sys.stderr)  # type: ignore[assignment]
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
