"""The PostgreSQL store beside the git store (issue 12): search_events p50 through the dispatcher on the same
generated events, in the same run, and the ingest wall time of each.

Usage: python bench/store_pg_bench.py [--quick] [--events N] [--dsn SUPERUSER_POSTGRESQL_URI]. Without --dsn it
reads HARNESS_TEST_PG_DSN; with neither it prints the document with no results and a `skipped` reason. It creates
a randomly named database, migrates it, measures, and drops it. The events are bench/store_bench.py's.
"""

from __future__ import annotations

import argparse
import io
import os
import random
import secrets
import tempfile
import time
import urllib.parse
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
from _common import emit, median, row
from psycopg import sql
from store_bench import ACTORS, TYPES, generate

from harness.config import Overrides, load_settings
from harness.context import Context, build_context
from harness.dispatch import CallContext, dispatch
from harness.investigate.services import store
from harness.store.backend import pg_connect_kwargs
from harness.store.ingest import ingest_files
from harness.store.pg import schema
from harness.surface import OPERATIONS

CALL = CallContext(surface="mcp", conversation_id="c", conversation_source="bench", request_id="1", tool_call_id="t")
QUERY_CALLS = 50


@contextmanager
def bench_database(admin_dsn: str) -> Iterator[str]:
    """A fresh database as a postgresql:// URI (the store refuses key=value DSNs); dropped afterwards."""
    name = f"harness_pgstore_bench_{secrets.token_hex(4)}"
    with psycopg.connect(admin_dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield urllib.parse.urlsplit(admin_dsn)._replace(path=f"/{name}").geturl()
    finally:
        with psycopg.connect(admin_dsn, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def _timed(call: Callable[[], Any]) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


def _context(workspace: Path) -> Context:
    return build_context(load_settings(Overrides(workspace=workspace), environ={}))


def _p50_ms(ctx: Context, pairs: Sequence[tuple[str, str]]) -> float:
    def call(actor: str, type_: str) -> None:
        outcome = dispatch(OPERATIONS, "search_events", {"actor": actor, "type": type_}, CALL, ctx)
        assert not outcome.error_code, outcome.text

    call(*pairs[0])
    return median([_timed(lambda p=pair: call(*p)) for pair in pairs]) * 1000


def measure(dsn: str, events: int) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="pgstore-bench-") as tmp:
        root = Path(tmp)
        events_file = root / "events.jsonl"
        generate(events_file, events)
        git_ws, pg_ws = root / "git", root / "pg"
        git_ws.mkdir()
        pg_ws.mkdir()
        (pg_ws / "harness.toml").write_text(f'[store]\nurl = "{dsn}"\n')
        schema.migrate(dsn, connect=pg_connect_kwargs(load_settings(Overrides(workspace=pg_ws), environ={})),
                       redact=str)
        contexts = {name: _context(ws) for name, ws in (("git", git_ws), ("pg", pg_ws))}
        walls = {
            name: _timed(lambda c=ctx: ingest_files(store(c), "events", [str(events_file)], stderr=io.StringIO()))
            for name, ctx in contexts.items()
        }
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("VACUUM ANALYZE store.events")
        rng = random.Random(11)
        pairs = [(f"actor-{rng.randrange(ACTORS):04d}", rng.choice(TYPES)) for _ in range(QUERY_CALLS)]
        git_ms, pg_ms = _p50_ms(contexts["git"], pairs), _p50_ms(contexts["pg"], pairs)
        for ctx in contexts.values():
            ctx.close()
    return [
        row("ingest_wall_git", walls["git"], "s", events=events),
        row("ingest_wall_pg", walls["pg"], "s", baseline=walls["git"], ratio=walls["pg"] / walls["git"], events=events),
        row("search_events_p50_git", git_ms, "ms", events=events),
        row("search_events_p50_pg", pg_ms, "ms", baseline=git_ms, ratio=pg_ms / git_ms, events=events),
    ]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a seconds-long smoke run")
    parser.add_argument("--events", type=int, default=1_000_000, help="events in the generated store")
    parser.add_argument("--dsn", default=None, help="a superuser postgresql:// URI (default: HARNESS_TEST_PG_DSN)")
    args = parser.parse_args(argv)
    dsn = args.dsn or os.environ.get("HARNESS_TEST_PG_DSN", "")
    if not dsn:
        emit("store_pg", [], skipped="no PostgreSQL DSN: pass --dsn or set HARNESS_TEST_PG_DSN")
        return
    with bench_database(dsn) as db_dsn:
        results = measure(db_dsn, 2000 if args.quick else args.events)
    emit("store_pg", results)


if __name__ == "__main__":
    main()
