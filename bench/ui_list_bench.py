"""Ledger web view benchmark (issue 10): the conversation list page on a 1,000,000-row SQLite ledger, beside a bare
SELECT of the same page.

Usage: python bench/ui_list_bench.py [--quick] [--rows N]. Prints one JSON object on stdout (bench/_common.py).
The ledger is real (the store's own schema, migrations, CHECKs and indexes) and its rows are real chained rows: one
conversation of 5 calls is prepared through the store's boundary conversion, then copied under new ids and times,
each copy re-chained, and written in one transaction; one copy in 1,000 leaves its last call in flight. The page figure is a full HTTP GET of /ui/ from a uvicorn
server on loopback (query, counts, template, CSP headers); the baseline is the same page's SELECT (browse.page_query, the
same filters and keyset) alone on a raw connection, so the ratio is what the view costs on top of finding its rows
(the per-conversation counts, the template, HTTP).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import sqlite3
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2
import uvicorn
from _common import emit, median, percentile, row

from harness.ledger import chain
from harness.ledger.browse import ConversationFilter, PageKey, page_query
from harness.ledger.dialect import COLUMNS_SQL, ROW_COLUMNS
from harness.ledger.model import LedgerEvent, LedgerRow, build_row
from harness.ledger.redaction_boundary import prepare
from harness.ledger.settings import LedgerSettings
from harness.ledger.sqlite import DIALECT, open_sqlite_store
from harness.serve.origins import HostPolicy
from harness.text.redact import RULESET_VERSION, KnownSecrets, build_redactor
from harness.ui.app import PAGE_SIZE, LedgerView, standalone_app

ROWS_PER_CONVERSATION = 10
TOOLS = ["search_events", "get_raw_event", "lookup_rules", "fp_agent_verify", "github_actor"]
PRINCIPALS = 20
T0 = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
TARGET_MS = 200.0
IN_FLIGHT_EVERY = 1000


def template(principal: int) -> list[LedgerRow]:
    """One conversation of five calls (one of them an error) as the store would prepare it."""
    redactor = build_redactor(KnownSecrets())
    meta = {"surface": "mcp", "caller": {"principal": f"agent-{principal:02d}@example.test", "auth_method": "oauth"}}
    rows, prev, seq = [], chain.ZERO_HASH, 0
    at = T0
    for n, tool in enumerate(TOOLS):
        for event in ("start", "end"):
            at += datetime.timedelta(milliseconds=3)
            fields: dict[str, Any] = {"ts": at, "started_at": at - datetime.timedelta(milliseconds=3 * (event == "end")),
                                      "meta": meta}
            if event == "start":
                seq += 1
                fields["arguments"] = f'{{"actor":"deploy-svc","limit":{10 + n},"since":"2026-01-01T00:00:00Z"}}'
            elif n == 1:
                fields.update(ended_at=at, duration_ms=3, status="error", error="not_found: no such event")
            else:
                fields.update(ended_at=at, duration_ms=3, status="ok", result_preview='{"events":[],"notes":""}',
                              result_bytes=24)
            event_in = LedgerEvent("tmpl", f"r{n}", f"t{n}", tool, event, **fields)
            prepared = prepare(event_in, redactor, redaction_version=RULESET_VERSION, now=at)
            built = build_row(prepared, seq=seq, chain_seq=len(rows) + 1, prev_hash=prev)
            rows.append(built)
            prev = built.row_hash
    return rows


def copies(templates: list[list[LedgerRow]], conversations: int) -> Any:
    """Each conversation's rows: a template under a new id, shifted in time, re-chained and re-hashed."""
    for c in range(conversations):
        cid = f"conv-{c:07d}"
        shift = datetime.timedelta(seconds=c)
        prev = chain.ZERO_HASH
        out = []
        for r in templates[c % len(templates)]:
            moved = dataclasses.replace(
                r, id=uuid.uuid4(), conversation_id=cid, ts=r.ts + shift,
                started_at=None if r.started_at is None else r.started_at + shift,
                ended_at=None if r.ended_at is None else r.ended_at + shift, prev_hash=prev,
            )
            moved = dataclasses.replace(moved, row_hash=chain.hash_values(moved.chain_values()))
            prev = moved.row_hash
            out.append(moved)
        # One conversation in IN_FLIGHT_EVERY has its last call still in flight (its end is the chain's tail).
        yield cid, out if c % IN_FLIGHT_EVERY else out[:-1]


def build_ledger(path: Path, total_rows: int) -> int:
    """A migrated ledger holding `total_rows` chained rows; returns the conversation count."""
    settings = LedgerSettings()
    store = open_sqlite_store(path, redactor=build_redactor(KnownSecrets()), clock=lambda: T0, settings=settings,
                              redaction_version=RULESET_VERSION, create=True)
    store.close()
    conversations = total_rows // ROWS_PER_CONVERSATION
    templates = [template(p) for p in range(PRINCIPALS)]
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA synchronous = OFF")
    insert_row = f"INSERT INTO tool_invocations ({COLUMNS_SQL}) VALUES ({', '.join('?' * len(ROW_COLUMNS))})"
    conn.execute("BEGIN IMMEDIATE")
    for cid, rows in copies(templates, conversations):
        conn.execute("INSERT INTO conversations (id, created_at) VALUES (?, ?)", (cid, DIALECT.ts_to_db(rows[0].ts)))
        conn.executemany(insert_row, [DIALECT.row_params(r) for r in rows])
    conn.execute("COMMIT")
    conn.execute("ANALYZE")
    conn.close()
    return conversations


def timed(work: Callable[[], Any], rounds: int) -> list[float]:
    work()  # warm the page cache and the template
    out = []
    for _ in range(rounds):
        started = time.perf_counter()
        work()
        out.append((time.perf_counter() - started) * 1000)
    return out


def serve(path: Path) -> tuple[str, uvicorn.Server, threading.Thread, Any]:
    store = open_sqlite_store(path, redactor=build_redactor(KnownSecrets()), clock=lambda: T0,
                              settings=LedgerSettings(), redaction_version=RULESET_VERSION, create=False)
    sock_port = _free_port()
    config = uvicorn.Config(standalone_app(LedgerView(store, path.parent), HostPolicy(True)), host="127.0.0.1",
                            port=sock_port, log_level="warning", log_config=None)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    return f"http://127.0.0.1:{sock_port}", server, thread, store


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a seconds-long smoke run (20,000 rows)")
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    total = 20_000 if args.quick else args.rows
    rounds = 5 if args.quick else 30
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "ledger.sqlite3"
        started = time.perf_counter()
        conversations = build_ledger(path, total)
        build_s = time.perf_counter() - started
        base, server, thread, store = serve(path)
        raw = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        results = []
        with httpx2.Client(base_url=base, timeout=60) as client:
            first = client.get("/ui/")
            assert first.status_code == 200 and first.text.count('class="conversation"') == PAGE_SIZE
            middle = f"conv-{conversations // 2:07d}"
            mid_ts = DIALECT.ts_from_db(raw.execute(
                "SELECT created_at FROM conversations WHERE id = ?", (middle,)).fetchone()[0])
            key = PageKey(mid_ts, middle)
            query = {"after_ts": mid_ts.strftime("%Y-%m-%dT%H:%M:%S.%fZ"), "after_id": middle}
            pages = {
                "list_page_first": ("/ui/", ConversationFilter(), None),
                "list_page_middle_keyset": ("/ui/?" + str(httpx2.QueryParams(query)), ConversationFilter(), key),
                "list_page_filter_status_error": ("/ui/?status=error", ConversationFilter(status="error"), None),
                "list_page_filter_tool_principal": (
                    "/ui/?tool=fp_agent_verify&principal=agent-07%40example.test",
                    ConversationFilter(tool_name="fp_agent_verify", principal="agent-07@example.test"),
                    None,
                ),
                "list_page_filter_text": ("/ui/?text=deploy-svc", ConversationFilter(text="deploy-svc"), None),
                "list_page_filter_in_flight": (
                    "/ui/?status=in_flight", ConversationFilter(status="in_flight"), None
                ),
            }
            for name, (url, where, after) in pages.items():
                sql, params = page_query(DIALECT, where, after, PAGE_SIZE + 1)
                bare = median(timed(lambda sql=sql, params=params: raw.execute(sql, params).fetchall(), rounds))
                ms = timed(lambda url=url: client.get(url).raise_for_status(), rounds)
                value = median(ms)
                results.append(row(name, value, "ms", target=f"< {TARGET_MS:.0f} ms", meets_target=value < TARGET_MS,
                                   baseline=bare, ratio=value / bare, p95_ms=round(percentile(ms, 95), 3)))
        raw.close()
        server.should_exit = True
        thread.join(10)
        store.close()
    in_flight = len(range(0, conversations, IN_FLIGHT_EVERY))
    emit("ui_list", results, rows=conversations * ROWS_PER_CONVERSATION - in_flight, conversations=conversations,
         calls_in_flight=in_flight, build_seconds=round(build_s, 1))


if __name__ == "__main__":
    main()
