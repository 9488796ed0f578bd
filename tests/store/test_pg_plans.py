"""The PostgreSQL store's indexes serve every query shape (issue 12 scope 5): for each combination of equality
filters, with and without a time window, PostgreSQL's own plan (EXPLAIN ANALYZE of the statements PgView.select
runs, on a store whose statistics are current) reads no table sequentially, reads the page's rows from an index,
and counts the total from an index. The rows a page reads are bounded by its limit, not by the matches: either
an index in result order stopped at the limit, or, where the planner knows the matches are few, those few rows
fetched by a bitmap and sorted. A missing or misordered index shows here as a Seq Scan, as a sort of every match
(thousands of rows for one type), or as the time index read in order with the type checked row by row (dropping
events_by_type reads 353 rows for a page of 50 on 30,000 events)."""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from pgsupport import PgServer, pg_server  # noqa: F401  (the shared session fixture)

from harness.store.index_schema import FILTER_COLUMNS
from harness.store.pg import schema
from harness.store.pg.store import PgStore, open_pg_store
from harness.store.pg.view import page_statements
from harness.store.query import RecordFilter
from harness.text.rfc3339 import parse_timestamp
from tests.store.test_pg_store import CONNECT

EVENTS = 20_000
LIMIT = 50
# A page may read a few times its limit (a bitmap of few matches then sorted, or an index of a rare value whose
# rows are filtered), never every match of a broad filter, nor the rows of a broad index filtered one by one.
PAGE_READ_BOUND = 4 * LIMIT
SCANS = {"Index Scan", "Index Only Scan", "Bitmap Heap Scan"}
DAY = 86_400 * 1_000_000  # microseconds, the unit of query.time_key


def _events() -> Iterator[dict[str, Any]]:
    """A year of events over 2,000 actors, 6 types and 3 sources (the proportions of bench/store_bench.py)."""
    rng = random.Random(3)
    types = ("login", "push", "container_restart", "role_assignment", "image_push", "delete")
    for n in range(EVENTS):
        yield {
            "id": f"plan-{n:06d}",
            "source": ("azure", "github", "aws")[n % 3],
            "type": rng.choice(types),
            "actor": f"actor-{rng.randrange(2000):04d}",
            "timestamp": f"2026-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}T{rng.randrange(24):02d}:00:00Z",
            "payload": {"target": f"resource-{rng.randrange(5000):05d}",
                        "metadata": {"ip": f"203.0.{rng.randrange(64)}.{rng.randrange(256)}"}},
        }


@pytest.fixture(scope="module")
def planned(pg_server: PgServer) -> Iterator[tuple[PgStore, str]]:  # noqa: F811
    dsn = pg_server.dsn_for(pg_server.create_database("harness_pgstore_plans"))
    schema.migrate(dsn, connect=CONNECT, redact=str)
    store = open_pg_store(dsn, connect=CONNECT, pool_max=2, redact=str)
    try:
        events = list(_events())
        store.append_batch("events", events)
        store.append_batch("findings", [{"id": f"f-{e['id']}", "source": e["source"], "type": e["type"],
                                         "actor": e["actor"], "timestamp": e["timestamp"]} for e in events])
        assert store.refresh_statistics() == []
        yield store, dsn
    finally:
        store.close()


def _nodes(plan: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield plan
    for child in plan.get("Plans", ()):
        yield from _nodes(child)


def _read(node: dict[str, Any]) -> int:
    """Rows a scan node visited: those it returned and those a filter outside the index condition dropped (an
    index that serves only some of the conditions reads the rest row by row)."""
    return node["Actual Rows"] + node.get("Rows Removed by Filter", 0) + node.get("Rows Removed by Index Recheck", 0)


def _plan(dsn: str, statement: Any, params: list[Any]) -> dict[str, Any]:
    with psycopg.connect(dsn) as conn:
        query = psycopg.sql.SQL("EXPLAIN (ANALYZE, FORMAT JSON) {}").format(statement).as_string(conn)
        return json.loads(json.dumps(conn.execute(query, params).fetchone()[0]))[0]["Plan"]


def _filters(stream: str) -> Iterator[tuple[str, RecordFilter]]:
    """Every combination of the stream's equality filters, each with and without a one-day window, valued from
    one stored event so the planner's estimates are those of a real match."""
    values = {"actor": "actor-0042", "type": "push", "source": "github", "target": "resource-00042",
              "ip": "203.0.7.7"}
    since = parse_timestamp("2026-06-01T00:00:00Z")
    columns = FILTER_COLUMNS[stream]
    for size in range(len(columns) + 1):
        for chosen in itertools.combinations(columns, size):
            for window in (False, True):
                if not chosen and not window:
                    continue
                bounds = {"since": since, "until": since + DAY} if window else {}
                name = "+".join(chosen) + ("+window" if window else "")
                yield name.lstrip("+"), RecordFilter(**{c: values[c] for c in chosen}, **bounds)


@pytest.mark.parametrize("stream", ["events", "findings"])
def test_every_filter_combination_pages_from_an_index_in_order_and_counts_from_an_index(
    planned: tuple[PgStore, str], stream: str
) -> None:
    _, dsn = planned
    problems = []
    for name, flt in _filters(stream):
        counting, paging, params = page_statements(stream, flt)
        page = list(_nodes(_plan(dsn, paging, [*params, LIMIT])))
        kinds = [node["Node Type"] for node in page]
        read = max((_read(node) for node in page if node["Node Type"] in SCANS), default=-1)
        if kinds[0] != "Limit" or "Seq Scan" in kinds or not 0 <= read <= PAGE_READ_BOUND:
            problems.append(f"{stream} {name} page: {kinds}, {read} rows read")
        count = [node["Node Type"] for node in _nodes(_plan(dsn, counting, params))]
        if "Seq Scan" in count or not {"Index Only Scan", "Index Scan", "Bitmap Index Scan"} & set(count):
            problems.append(f"{stream} {name} total: {count}")
    assert problems == [], "\n".join(problems)


def test_ids_are_found_through_the_unique_index_and_the_unfiltered_total_through_the_primary_key(
    planned: tuple[PgStore, str]
) -> None:
    store, dsn = planned
    counting, paging, params = page_statements("events", RecordFilter(ids=("plan-000001", "PLAN-000002")))
    kinds = [(node["Node Type"], node.get("Index Name")) for node in _nodes(_plan(dsn, paging, [*params, LIMIT]))]
    assert ("Index Scan", "events_lid") in kinds and "Seq Scan" not in {kind for kind, _ in kinds}
    counting, _, params = page_statements("events", RecordFilter())
    kinds = [node["Node Type"] for node in _nodes(_plan(dsn, counting, params))]
    assert "Seq Scan" not in kinds and {"Index Only Scan", "Index Scan"} & set(kinds), kinds
    with store.snapshot() as view:
        assert view.select("events", RecordFilter(), 1).total == EVENTS
