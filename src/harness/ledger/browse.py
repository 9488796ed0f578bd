"""The conversation list of the ledger web view (docs/decisions.md, "Ledger web view"): filters, keyset pages and
per-conversation counts, as SQL over both backends' shared indexes.

A conversation is dated by its genesis row (chain_seq 1, always a start, whose ts verify ties to created_at), so the
newest-first walk runs backwards over the partial index of start rows and stops once a page is full, whatever the
ledger's size; each filter is an EXISTS over the conversation's own rows through the (conversation_id, ...) indexes.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Callable, Sequence
from typing import Any

from harness.ledger.dialect import Dialect


@dataclasses.dataclass(frozen=True)
class ConversationFilter:
    """since inclusive and until exclusive on the conversation's start; the rest match any of its rows."""

    since: datetime.datetime | None = None
    until: datetime.datetime | None = None
    tool_name: str | None = None
    # ok or error: a call that ended so; in_flight: a start without its end.
    status: str | None = None
    principal: str | None = None
    # A substring of a row's tool name, arguments, error or result preview (case-sensitive).
    text: str | None = None


@dataclasses.dataclass(frozen=True)
class PageKey:
    """Where a page ends: the last conversation's start time and id (the list is ts DESC, id ASC)."""

    started_at: datetime.datetime
    conversation_id: str


@dataclasses.dataclass(frozen=True)
class ConversationRow:
    """One line of the list: the conversation, who started it, and the counts of its rows."""

    conversation_id: str
    started_at: datetime.datetime
    principal: str
    calls: int
    ended: int
    errors: int
    last_chain_seq: int
    last_ts: datetime.datetime

    @property
    def in_flight(self) -> int:
        return self.calls - self.ended

    @property
    def key(self) -> PageKey:
        return PageKey(self.started_at, self.conversation_id)


def _text_match(d: Dialect, column: str) -> str:
    # instr and strpos: a plain substring test with no pattern characters to escape.
    function = "instr" if d.name == "sqlite" else "strpos"
    return f"{function}({column}, ?) > 0"


def page_query(d: Dialect, where: ConversationFilter, after: PageKey | None, limit: int) -> tuple[str, list[Any]]:
    """The SQL and parameters of one page of (conversation_id, started_at, principal), newest first."""
    starts = "{ti} s WHERE"
    if where.status == "in_flight":
        # Driven by the triggers' index of calls with no end (docs/decisions.md, "Open calls"), so the page costs
        # the conversations in flight and not every conversation's walk; CROSS JOIN keeps that order on SQLite.
        starts = (
            "(SELECT DISTINCT conversation_id FROM {oc}) o CROSS JOIN {ti} s"
            " WHERE s.conversation_id = o.conversation_id AND"
        )
    sql = f"SELECT s.conversation_id, s.ts, {d.principal_sql} FROM {starts} s.event = 'start' AND s.chain_seq = 1"
    params: list[Any] = []
    if where.since is not None:
        sql, params = sql + " AND s.ts >= ?", [*params, d.ts_to_db(where.since)]
    if where.until is not None:
        sql, params = sql + " AND s.ts < ?", [*params, d.ts_to_db(where.until)]
    if after is not None:
        at = d.ts_to_db(after.started_at)
        # The bare `s.ts <= ?` is the range an index can seek to; the OR alone would make it scan from the top.
        sql += " AND s.ts <= ? AND (s.ts < ? OR s.conversation_id > ?)"
        params += [at, at, after.conversation_id]
    rows_of = " FROM {ti} t WHERE t.conversation_id = s.conversation_id"
    if where.tool_name is not None:
        sql, params = sql + f" AND EXISTS (SELECT 1{rows_of} AND t.tool_name = ?)", [*params, where.tool_name]
    if where.status in ("ok", "error"):
        sql += f" AND EXISTS (SELECT 1{rows_of} AND t.event = 'end' AND t.status = ?)"
        params.append(where.status)
    if where.principal is not None:
        principal = d.principal_sql.replace("s.meta", "t.meta")
        sql += f" AND EXISTS (SELECT 1{rows_of} AND t.event = 'start' AND {principal} = ?)"
        params.append(where.principal)
    if where.text is not None:
        columns = ("t.tool_name", "t.arguments", "t.error", "t.result_preview")
        sql += f" AND EXISTS (SELECT 1{rows_of} AND (" + " OR ".join(_text_match(d, c) for c in columns) + "))"
        params += [where.text] * len(columns)
    sql += " ORDER BY s.ts DESC, s.conversation_id LIMIT ?"
    return d.sql(sql), [*params, limit]


def counts_query(d: Dialect, conversation_ids: Sequence[str]) -> tuple[str, list[Any]]:
    """Per conversation: starts, ends, error ends, last chain position and last row time."""
    marks = ", ".join(["?"] * len(conversation_ids))
    sql = (
        "SELECT conversation_id, sum(CASE WHEN event = 'start' THEN 1 ELSE 0 END),"
        " sum(CASE WHEN event = 'end' THEN 1 ELSE 0 END), sum(CASE WHEN status = 'error' THEN 1 ELSE 0 END),"
        f" max(chain_seq), max(ts) FROM {{ti}} WHERE conversation_id IN ({marks}) GROUP BY conversation_id"
    )
    return d.sql(sql), list(conversation_ids)


def conversation_page(
    d: Dialect,
    fetch: Callable[[str, Sequence[Any]], list[Any]],
    where: ConversationFilter,
    after: PageKey | None,
    limit: int,
) -> list[ConversationRow]:
    """Up to `limit` conversations after `after` that match `where`, with their counts."""
    found = fetch(*page_query(d, where, after, limit))
    if not found:
        return []
    counts = {r[0]: r[1:] for r in fetch(*counts_query(d, [cid for cid, _, _ in found]))}
    out = []
    for cid, ts, principal in found:
        calls, ended, errors, last_seq, last_ts = counts[cid]
        out.append(
            ConversationRow(
                cid, d.ts_from_db(ts), principal or "", int(calls), int(ended), int(errors), int(last_seq),
                d.ts_from_db(last_ts),
            )
        )
    return out
