"""`harness ledger tail`'s positions and line formats: JSON Lines or RFC 5424 syslog (docs/decisions.md,
"Ledger tail and signed heads"). Pure functions; the reading loop is in commands.py.

A position is `KEY:ROW_ID`: the backend's global order key (SQLite rowid, PostgreSQL writing transaction id) and
the row id, which breaks ties between the rows of one PostgreSQL transaction. Every line carries the position of
its row, so a shipper restarts with `--from` the position of the last line it delivered.
"""

from __future__ import annotations

import dataclasses
import re
import uuid
from typing import Any

from harness.errors import InvalidInput
from harness.ledger.model import LedgerRow, format_ts
from harness.text import canonjson
from harness.text.sanitize import echo

FORMATS = ("jsonl", "syslog")
# The enterprise number RFC 5612 reserves for documentation: the SD-ID names this project without a registration.
SD_ID = "triage-harness@32473"
APP_NAME = "triage-harness"
# facility 13 (log audit); severity 6 (informational) or 4 (warning, a call that ended in an error).
_FACILITY = 13
_POSITION = re.compile(r"(0|[1-9][0-9]{0,19}):([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})")
_HOSTNAME = re.compile(r"[!-~]{1,255}")
_SD_PARAMS = ("conversation_id", "chain_seq", "event", "tool_name", "status", "row_hash")


@dataclasses.dataclass(frozen=True, order=True)
class Position:
    """Where a row stands in the global order: after it, the tail goes on."""

    key: int
    row_id: uuid.UUID

    def __str__(self) -> str:
        return f"{self.key}:{self.row_id}"


def parse_position(text: str) -> Position:
    """A `--from` value as printed by tail; InvalidInput names the option."""
    match = _POSITION.fullmatch(text)
    if match is None or int(match[1]) >= 2**63:
        raise InvalidInput(f"from: expected a position printed by ledger tail (KEY:ROW_ID), got {echo(text)}")
    return Position(int(match[1]), uuid.UUID(match[2]))


def check_format(name: str) -> str:
    """The `--format` value, refused unless it is one of FORMATS."""
    if name not in FORMATS:
        raise InvalidInput(f"format: expected one of {', '.join(FORMATS)}, got {echo(name)}")
    return name


def jsonl_line(position: Position, row: LedgerRow) -> str:
    """The export's row form with the row's `position` added, as one canonical JSON line."""
    document: dict[str, Any] = {**row.to_json(), "position": str(position)}
    return canonjson.dumps(document) + "\n"


def _sd_value(value: object) -> str:
    # RFC 5424 PARAM-VALUE: '"', '\' and ']' are escaped with a backslash.
    return re.sub(r'(["\\\]])', r"\\\1", str(value))


def syslog_line(position: Position, row: LedgerRow, hostname: str) -> str:
    """One RFC 5424 message: the row's ts, the event as MSGID, the chain fields and the position as structured
    data, and the export's row form as MSG (canonical JSON, no BOM)."""
    severity = 4 if row.status == "error" else 6
    host = hostname if _HOSTNAME.fullmatch(hostname) else "-"
    values = {name: getattr(row, name) for name in _SD_PARAMS}
    values["row_hash"] = row.row_hash.hex()
    params = " ".join(f'{name}="{_sd_value(v)}"' for name, v in values.items() if v is not None)
    data = f'[{SD_ID} position="{position}" {params}]'
    message = canonjson.dumps(row.to_json())
    return f"<{_FACILITY * 8 + severity}>1 {format_ts(row.ts)} {host} {APP_NAME} - {row.event} {data} {message}\n"
