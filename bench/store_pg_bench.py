"""The PostgreSQL store beside the git store (issue 12): search_events p50 through the dispatcher on the same
generated events, in the same run, and the ingest wall time of each.

Usage: python bench/store_pg_bench.py [--quick] [--events N] [--dsn SUPERUSER_POSTGRESQL_URI]. Without --dsn it
reads HARNESS_TEST_PG_DSN; with neither it prints the document with no results and a `skipped` reason. It creates
a randomly named database, migrates it, measures, and drops it. The events are bench/store_bench.py's.

With --git-1m WORKSPACE and any of --pg-1m / --pg-10m URI it instead reads existing stores only (a git workspace
built from bench/store_bench.py's events, PostgreSQL stores copied or loaded from the same generator, e.g. by
bench/store_pg_load.py) and reports search_events p50 per query shape on each, in one run, with each PostgreSQL
figure's ratio against the git store's. Calls go through the dispatcher from a scratch workspace, so the measured
stores are only read.
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
from store_bench import ACTORS, SOURCES, TYPES, YEAR_SECONDS, YEAR_START, generate

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


def _shapes() -> dict[str, list[dict[str, Any]]]:
    """QUERY_CALLS argument sets per search_events query shape, the same for every store measured."""
    rng = random.Random(11)

    def day() -> dict[str, Any]:
        start = YEAR_START + rng.randrange(YEAR_SECONDS - 86_400)
        return {"since": _iso(start), "until": _iso(start + 86_400)}

    def actor() -> str:
        return f"actor-{rng.randrange(ACTORS):04d}"

    return {
        "actor": [{"actor": actor()} for _ in range(QUERY_CALLS)],
        "type": [{"type": rng.choice(TYPES)} for _ in range(QUERY_CALLS)],
        "actor_type": [{"actor": actor(), "type": rng.choice(TYPES)} for _ in range(QUERY_CALLS)],
        "window": [day() for _ in range(QUERY_CALLS)],
        "source": [{"source": rng.choice(SOURCES)} for _ in range(QUERY_CALLS)],
        "ids": [{"ids": [f"evt-{rng.randrange(1_000_000):08d}" for _ in range(10)]} for _ in range(QUERY_CALLS)],
    }


def _iso(stamp: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(stamp))


def _shape_p50_ms(ctx: Context, calls: Sequence[dict[str, Any]]) -> float:
    def call(arguments: dict[str, Any]) -> None:
        outcome = dispatch(OPERATIONS, "search_events", arguments, CALL, ctx)
        assert not outcome.error_code, outcome.text

    call(calls[0])
    return median([_timed(lambda a=arguments: call(a)) for arguments in calls]) * 1000


def measure_existing(git_1m: Path, pg: dict[str, str]) -> list[dict[str, Any]]:
    """search_events p50 per shape on the git 1M workspace and each named PostgreSQL store, ratios against git."""
    shapes = _shapes()
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="pgstore-bench-") as tmp:
        root = Path(tmp)
        git_ws = root / "git_1m"
        git_ws.mkdir()
        # The store and its read index are linked, not copied, so the ledger the dispatcher writes stays here.
        (git_ws / "store").symlink_to(git_1m / "store")
        (git_ws / "store.index.sqlite3").symlink_to(git_1m / "store.index.sqlite3")
        contexts = {"git_1m": _context(git_ws)}
        for name, url in pg.items():
            ws = root / name
            ws.mkdir()
            (ws / "harness.toml").write_text(f'[store]\nurl = "{url}"\n')
            contexts[name] = _context(ws)
        try:
            for shape, calls in shapes.items():
                git_ms = _shape_p50_ms(contexts["git_1m"], calls)
                results.append(row(f"search_events_p50_{shape}_git_1m", git_ms, "ms", events=1_000_000))
                for name in pg:
                    pg_ms = _shape_p50_ms(contexts[name], calls)
                    results.append(row(f"search_events_p50_{shape}_{name}", pg_ms, "ms", baseline=git_ms,
                                       ratio=pg_ms / git_ms))
        finally:
            for ctx in contexts.values():
                ctx.close()
    return results


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a seconds-long smoke run")
    parser.add_argument("--events", type=int, default=1_000_000, help="events in the generated store")
    parser.add_argument("--dsn", default=None, help="a superuser postgresql:// URI (default: HARNESS_TEST_PG_DSN)")
    parser.add_argument("--git-1m", type=Path, default=None, help="workspace of a 1M-event git store to read")
    parser.add_argument("--pg-1m", default=None, help="postgresql:// URI of a 1M-event PostgreSQL store to read")
    parser.add_argument("--pg-10m", default=None, help="postgresql:// URI of a 10M-event PostgreSQL store to read")
    args = parser.parse_args(argv)
    pg = {name: url for name, url in (("pg_1m", args.pg_1m), ("pg_10m", args.pg_10m)) if url}
    if args.git_1m is not None or pg:
        if args.git_1m is None or not pg:
            parser.error("--git-1m: needs at least one of --pg-1m / --pg-10m, and they need --git-1m")
        if not (args.git_1m / "store").is_dir():
            parser.error(f"--git-1m: {args.git_1m} has no store directory")
        emit("store_pg_scale", measure_existing(args.git_1m, pg))
        return
    dsn = args.dsn or os.environ.get("HARNESS_TEST_PG_DSN", "")
    if not dsn:
        emit("store_pg", [], skipped="no PostgreSQL DSN: pass --dsn or set HARNESS_TEST_PG_DSN")
        return
    with bench_database(dsn) as db_dsn:
        results = measure(db_dsn, 2000 if args.quick else args.events)
    emit("store_pg", results)


if __name__ == "__main__":
    main()
