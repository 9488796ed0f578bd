"""The stderr log: every line passes the redactor before it is written (stdout stays the protocol)."""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harness.text.redact import Redactor


class RedactingStderrHandler(logging.Handler):
    """Writes each formatted line through `Redactor.redact_line` to the current sys.stderr."""

    def __init__(self) -> None:
        super().__init__()
        self.redactor: Redactor | None = None
        self.setFormatter(logging.Formatter("harness: %(levelname)s %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = self.format(record)
            lines = text.split("\n")
            if self.redactor is not None:
                lines = [self.redactor.redact_line(line) for line in lines]
            # Looked up at emit time so redirected stderr (tests, the CLI runner) is honoured.
            sys.stderr.write("\n".join(lines) + "\n")
        except Exception:  # noqa: BLE001 - logging must never break a call
            self.handleError(record)


_HANDLER = RedactingStderrHandler()


def setup_logging(level: int = logging.WARNING) -> None:
    """Route the `harness` loggers to the redacting stderr handler (idempotent)."""
    logger = logging.getLogger("harness")
    if _HANDLER not in logger.handlers:
        logger.addHandler(_HANDLER)
    logger.setLevel(level)
    logger.propagate = False


def use_redactor(redactor: Redactor) -> None:
    """Redact log lines with the process's redactor from now on."""
    _HANDLER.redactor = redactor
