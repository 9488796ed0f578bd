"""Concurrency through the dispatcher (docs/ledger.md §10, docs/ledger.md §14 "Concurrency"): 8 spawned processes each dispatch 100
calls (ok, error, invalid_input) into 3 shared conversations and 1 private one, on both backends. Every call
leaves exactly its start and its end, every chain stays contiguous and verifies, and no call is refused."""

from __future__ import annotations

import multiprocessing
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from itertools import groupby
from pathlib import Path

import pytest
from pgsupport import PgServer, pg_server  # noqa: F401  (the shared session fixture)
from recording_support import all_rows, dispatch_worker, make_pg_ledger, reader, write_config

from harness.ledger.verify import verify

WORKERS = 8
CALLS = 100


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.pg)])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    write_config(tmp_path, busy_timeout_ms=30_000, lock_timeout_ms=30_000, statement_timeout_ms=60_000)
    if request.param == "sqlite":
        yield str(tmp_path / "ledger.sqlite3")
        return
    server: PgServer = request.getfixturevalue("pg_server")
    db = make_pg_ledger(server, "harness_concurrency")
    yield db.dsn
    server.drop_database(db.dbname)


@pytest.mark.slow
def test_eight_processes_dispatching_into_shared_conversations(tmp_path: Path, target: str) -> None:
    with ProcessPoolExecutor(WORKERS, mp_context=multiprocessing.get_context("spawn")) as pool:
        results = list(
            pool.map(dispatch_worker, [str(tmp_path)] * WORKERS, [target] * WORKERS, range(WORKERS), [CALLS] * WORKERS)
        )
    codes = Counter(code for worker in results for code in worker)
    assert sum(codes.values()) == WORKERS * CALLS
    assert set(codes) == {"", "not_found", "invalid_input"}  # never ledger_unavailable

    rows = all_rows(target)
    assert len(rows) == 2 * WORKERS * CALLS
    calls: dict[tuple[str, str, str], list[str]] = {}
    for row in rows:
        calls.setdefault(row.key[:3], []).append(row.event)
    assert len(calls) == WORKERS * CALLS
    assert all(sorted(events) == ["end", "start"] for events in calls.values())
    assert Counter(r.status for r in rows if r.event == "end") == {
        "ok": codes[""],
        "error": WORKERS * CALLS - codes[""],
    }

    conversations = {cid: list(group) for cid, group in groupby(rows, key=lambda r: r.conversation_id)}
    assert sorted(conversations) == sorted([f"shared-{n}" for n in range(3)] + [f"private-{w}" for w in range(WORKERS)])
    for cid, chain in conversations.items():
        assert [r.chain_seq for r in chain] == list(range(1, len(chain) + 1)), cid
        starts = {r.key[:3]: r.seq for r in chain if r.event == "start"}
        assert sorted(starts.values()) == list(range(1, len(starts) + 1)), cid
        assert all(r.seq == starts[r.key[:3]] for r in chain if r.event == "end"), cid

    store = reader(target)
    try:
        report = verify(store)
    finally:
        store.close()
    assert report["ok"] is True and report["in_flight"] == 0 and report["rows"] == len(rows)
