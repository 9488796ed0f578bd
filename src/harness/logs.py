"""The stderr log: every record of every library passes the redactor before it is written (stdout stays the
protocol)."""

from __future__ import annotations

import logging
import sys

from harness import outputs


class RedactingStderrHandler(logging.Handler):
    """Writes each formatted record through `Redactor.redact_line` to the current sys.stderr."""

    def __init__(self) -> None:
        super().__init__()
        self.setFormatter(logging.Formatter("harness: %(levelname)s %(name)s: %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        try:
            redactor = outputs.current_redactor()
            lines = [redactor.redact_line(line) for line in self.format(record).split("\n")]
            # Looked up at emit time so redirected stderr (tests, the CLI runner) is honoured.
            sys.stderr.write("\n".join(lines) + "\n")
        except Exception:  # noqa: BLE001 - logging must never break a call
            self.handleError(record)


_HANDLER = RedactingStderrHandler()


def setup_logging(level: int = logging.WARNING) -> None:
    """Make the redacting handler the root logger's only handler, so the records of the MCP SDK, uvicorn and every
    other library go through it too, and route warnings to logging (idempotent)."""
    root = logging.getLogger()
    for handler in list(root.handlers):
        if isinstance(handler, RedactingStderrHandler) and handler is not _HANDLER:
            root.removeHandler(handler)
    if _HANDLER not in root.handlers:
        root.addHandler(_HANDLER)
    root.setLevel(level)
    # Without a handler of its own, a record is never given to logging's unredacted last-resort handler.
    logging.lastResort = None
    logging.captureWarnings(True)

