"""Rendering shared by fp_agent_pr and fp_agent_alert: the docs/triage.md §10 input checks, titles, tables and JSON files.

The renderers check shape, never truth: they re-validate the result, recompute the verdict digest
and refuse anything not verified. Truth rests on the ledger record of the verify call.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError as ModelError

from harness.errors import InvalidInput, Refused
from harness.text.formatgate import FormatError, JsonPath, Mode, cell, check, check_tree
from harness.triage.consistency import consistent_verdict
from harness.triage.result import IocEntry, Result, parse_result
from harness.triage.verdict import (
    RESULT_MAX_BYTES,
    ObjectInputError,
    Verdict,
    hash12,
    read_object_received,
    verdict_mode,
)
from harness.validation import describe_validation_error

MAX_TITLE_RULES = 3
# Four spaces make a markdown code block: nothing inside it is a heading, table, list or fence.
LITERAL_INDENT = "    "
# Result strings copied from the verdict's prose keep its prose mode (docs/decisions.md, Triage rendering).
_RESULT_PROSE = frozenset({("ioc_entries", "provenance"), ("ioc_entries", "note")})
NOT_VERIFIED = "result is not verified; only verified results are rendered"
UNCERTAIN = "uncertain verdicts are never rendered"


@dataclass(frozen=True)
class Rendering:
    """A result that passed docs/triage.md §10: the document as received, its model and its re-validated verdict."""

    document: dict[str, Any]
    result: Result
    verdict: Verdict


def result_mode(path: JsonPath) -> Mode | None:
    """Gate mode of a path inside a result: the verdict table under verdict_document (and for the prose it
    copies into ioc_entries), findings_table `document`, the rest `line`."""
    if path[:1] == ("verdict_document",):
        return verdict_mode(path[1:])
    if path == ("findings_table",):
        return "document"
    if len(path) == 3 and isinstance(path[1], int) and (path[0], path[2]) in _RESULT_PROSE:
        return "prose_line"
    return "line"


def load_result(raw: Mapping[str, Any]) -> Rendering:
    """docs/triage.md §10 in order: strict reading, gate and model (invalid_input); verified (refused); consistency (invalid_input)."""
    try:
        document = read_object_received(raw, RESULT_MAX_BYTES, "result")
        check_tree(document, result_mode)
    except (FormatError, ObjectInputError) as exc:
        message = str(exc)
        raise InvalidInput(message if message.startswith("result:") else f"result: {message}") from None
    try:
        result = parse_result(document)
    except ModelError as exc:
        raise InvalidInput(f"result: {describe_validation_error(exc, Result)}") from None
    if result.verified is not True:
        raise Refused(NOT_VERIFIED)
    if result.verdict == "uncertain":
        raise Refused(UNCERTAIN)
    return Rendering(document, result, consistent_verdict(document, result))


def branch(kind: str, package: str, verdict_sha256: str) -> str:
    """`triage/<kind>-<package>-<hash12>`; package names exclude everything git refuses in a ref."""
    return f"triage/{kind}-{package}-{hash12(verdict_sha256)}"


def rules_phrase(rule_ids: Iterable[str]) -> str:
    """Up to three sorted distinct rule ids joined by `, `, then ` and <n> more`."""
    ids = sorted(set(rule_ids))
    shown = ", ".join(ids[:MAX_TITLE_RULES])
    extra = len(ids) - MAX_TITLE_RULES
    return f"{shown} and {extra} more" if extra > 0 else shown


def indicators_phrase(count: int) -> str:
    """`1 indicator`, `<n> indicators`."""
    return f"{count} indicator" if count == 1 else f"{count} indicators"


def campaign_label(entries: Sequence[IocEntry]) -> str:
    """The first campaign among the entries (result order), else the first incident."""
    for entry in entries:
        if entry.campaign:
            return entry.campaign
    return next((entry.incident for entry in entries if entry.incident), "")


def table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    """Markdown table lines; every cell goes through `cell()` so no value breaks out of its row."""
    lines = ["| " + " | ".join(cell(h) for h in header) + " |", "|" + "---|" * len(header)]
    lines.extend("| " + " | ".join(cell(value) for value in row) + " |" for row in rows)
    return lines


def prose(text: str, mode: Mode, where: str) -> str:
    """Agent prose about to be emitted, through the full gate of its mode whatever path it came by."""
    try:
        check(text, mode, where)
    except FormatError as exc:
        raise InvalidInput(str(exc)) from None
    return text


def literal(text: str) -> list[str]:
    """Multi-line agent prose for a body, shown verbatim as an indented code block.

    A block quote would still render headings, tables and lists typed inside it, and escaping markdown
    is a list of special cases; inside a code block no line can start any structure.
    """
    return [LITERAL_INDENT + line for line in text.split("\n")]


def body(sections: Sequence[tuple[str, Sequence[str]]]) -> str:
    """`## <Heading>`, a blank line, the content, a blank line before the next; one trailing newline."""
    lines: list[str] = []
    for heading, content in sections:
        if lines:
            lines.append("")
        lines.extend([f"## {heading}", "", *content])
    return "\n".join(lines) + "\n"


def pretty_json(value: Any) -> str:
    """Pretty JSON for files: sorted keys, two-space indent, ASCII, one trailing newline."""
    return json.dumps(value, sort_keys=True, indent=2, separators=(",", ": "), ensure_ascii=True) + "\n"


def gate_output(title: str, text: str, json_files: Iterable[tuple[str, str]] = ()) -> None:
    """Gate what is emitted: the title as `line`, the body and every rendered JSON file as `document`."""
    try:
        check(title, "line", "title")
        check(text, "document", "body")
        for path, content in json_files:
            check(content, "document", f"files[{json.dumps(path)}]")
    except FormatError as exc:
        raise InvalidInput(str(exc)) from None
