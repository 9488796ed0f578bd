"""The shared name patterns of docs/triage.md §2: rule ids, evidence files, dates, plus the AUR-level ones.

Package, commit, version and scriptlet patterns live in harness.aur.names (the AUR client needs them
and `aur` never imports `triage`); they are re-exported here for the triage modules.
"""

from __future__ import annotations

import datetime
import re

from harness.aur.names import MAX_VERSION_CHARS, is_commit, is_package_name, is_scriptlet_name, is_version

__all__ = [
    "FATAL_BASE_IDS",
    "MAX_EVIDENCE_FILE_CHARS",
    "MAX_VERSION_CHARS",
    "base_rule_id",
    "is_commit",
    "is_date",
    "is_evidence_file",
    "is_fatal",
    "is_package_name",
    "is_rule_id",
    "is_scriptlet_name",
    "is_timestamp",
    "is_version",
]

MAX_EVIDENCE_FILE_CHARS = 255

_RULE_ID = re.compile(r"[A-Z][0-9]{3}[a-z]?|SOURCE_BUCKET|NOVELTY|COVERAGE")
_EVIDENCE_FILE = re.compile(r"[A-Za-z0-9@._+-]+(?:/[A-Za-z0-9@._+-]+)*")
_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_TIME = re.compile(r"T([0-9]{2}):([0-9]{2}):([0-9]{2})Z")

FATAL_BASE_IDS = frozenset({"R012", "R013"})


def is_rule_id(value: str) -> bool:
    """A watcher rule id such as `R007`, `H016a` or one of the named aggregate rules."""
    return _RULE_ID.fullmatch(value) is not None


def base_rule_id(rule_id: str) -> str:
    """The rule id without its trailing lowercase variant letter (`R013b` gives `R013`)."""
    return rule_id[:-1] if rule_id[-1:].islower() else rule_id


def is_fatal(rule_id: str) -> bool:
    """Whether the rule's base id is FATAL (never suppressible)."""
    return base_rule_id(rule_id) in FATAL_BASE_IDS


def is_evidence_file(value: str) -> bool:
    """A relative file path of safe characters with no `.` or `..` component."""
    if not 1 <= len(value) <= MAX_EVIDENCE_FILE_CHARS or _EVIDENCE_FILE.fullmatch(value) is None:
        return False
    return all(part not in (".", "..") for part in value.split("/"))


def _real_date(year: str, month: str, day: str) -> bool:
    if not 2000 <= int(year) <= 2099:
        return False
    try:
        datetime.date(int(year), int(month), int(day))
    except ValueError:
        return False
    return True


def is_date(value: str) -> bool:
    """`YYYY-MM-DD`, a real calendar date in the years 2000 to 2099."""
    found = _DATE.fullmatch(value)
    return found is not None and _real_date(*found.groups())


def is_timestamp(value: str) -> bool:
    """A date, or `YYYY-MM-DDTHH:MM:SSZ` with a real date and time."""
    if len(value) == 10:
        return is_date(value)
    date_part = _DATE.match(value)
    if date_part is None or not _real_date(*date_part.groups()):
        return False
    time_part = _TIME.fullmatch(value, date_part.end())
    if time_part is None:
        return False
    hour, minute, second = (int(g) for g in time_part.groups())
    return hour <= 23 and minute <= 59 and second <= 59
