"""Concurrency (docs/ledger.md §10, docs/ledger.md §14) at the store level: 8 spawned processes write into shared and private
conversations of one ledger; every call is recorded once and every chain stays contiguous and valid."""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from itertools import groupby

import pytest
from ledger_support import concurrency_worker

from harness.ledger.store import LedgerStore
from harness.ledger.verify import verify

WORKERS = 8
CALLS = 100


@pytest.mark.slow
def test_eight_processes(store: LedgerStore, ledger_target: str) -> None:
    with ProcessPoolExecutor(WORKERS, mp_context=multiprocessing.get_context("spawn")) as pool:
        done = list(pool.map(concurrency_worker, [ledger_target] * WORKERS, range(WORKERS), [CALLS] * WORKERS))
    assert done == [CALLS] * WORKERS

    rows = list(store.iter_rows())
    assert len(rows) == 2 * WORKERS * CALLS
    calls: dict[tuple[str, str, str], list[str]] = {}
    for row in rows:
        calls.setdefault((row.conversation_id, row.request_id, row.tool_call_id), []).append(row.event)
    assert len(calls) == WORKERS * CALLS
    assert all(sorted(events) == ["end", "start"] for events in calls.values())

    conversations = {cid: list(group) for cid, group in groupby(rows, key=lambda r: r.conversation_id)}
    assert sorted(conversations) == sorted([f"shared-{n}" for n in range(3)] + [f"private-{w}" for w in range(WORKERS)])
    for cid, chain in conversations.items():
        assert [r.chain_seq for r in chain] == list(range(1, len(chain) + 1)), cid
        starts = sorted(r.seq for r in chain if r.event == "start")
        assert starts == list(range(1, len(starts) + 1)), cid
        seq_of = {(r.request_id, r.tool_call_id): r.seq for r in chain if r.event == "start"}
        assert all(r.seq == seq_of[(r.request_id, r.tool_call_id)] for r in chain if r.event == "end")

    report = verify(store)
    assert report["ok"] is True and report["in_flight"] == 0 and report["rows"] == len(rows)
