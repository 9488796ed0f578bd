"""Single-row writes computed against a remembered head (docs/ledger.md §8.2, docs/ledger.md §10), on PostgreSQL,
where a guess saves a round trip; SQLite, where it measured no gain, always takes the full path (docs/decisions.md,
"Ledger storage and group commit").

A store remembers the head each write left; its next single-row write in that conversation is computed against it
and inserted only if the head is unchanged, else it takes the full docs/ledger.md §8.2 path. The rows must be exactly those the
full path writes, and a stale head (another store or process wrote meanwhile, or the conversation was deleted)
must change nothing but the path taken. `write_prepared` is the full path: counting its calls shows which ran.
"""

from __future__ import annotations

import datetime
import uuid
from collections.abc import Iterator, Sequence

import pytest
from ledger_support import T0, FakeClock, PgAdmin, SqliteAdmin, open_test_store

from harness.ledger import sqlcore
from harness.ledger.errors import LedgerIntegrityError
from harness.ledger.model import LedgerEvent, LedgerRow, end_event
from harness.ledger.sqlcore import WriteOutcome
from harness.ledger.store import LedgerStore
from harness.ledger.verify import verify
from harness.text.redact import Redactor


class FullPathCount:
    """Counts the writes that went the full docs/ledger.md §8.2 way (probes, then inserts)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        original = sqlcore.write_prepared

        def counted(*args: object) -> WriteOutcome:
            self.calls += 1
            return original(*args)  # type: ignore[arg-type]

        monkeypatch.setattr(sqlcore, "write_prepared", counted)


@pytest.fixture
def full_path(monkeypatch: pytest.MonkeyPatch) -> FullPathCount:
    return FullPathCount(monkeypatch)


@pytest.fixture
def twin_target(backend: str, tmp_path: object, request: pytest.FixtureRequest) -> Iterator[str]:
    """A second fresh ledger of the same backend."""
    if backend == "sqlite":
        yield str(request.getfixturevalue("tmp_path") / "twin.sqlite3")
        return
    server = request.getfixturevalue("pg_server")
    template = request.getfixturevalue("pg_ledger_template")
    dbname = server.create_database("harness_ledger", template=template.dbname)
    yield server.dsn_for(dbname, template.login_role)
    server.drop_database(dbname)


def _start(conversation: str, n: int, **fields: object) -> LedgerEvent:
    return LedgerEvent(
        conversation,
        f"r{n}",
        f"k{n}",
        "search_events",
        "start",
        id=uuid.UUID(int=2 * n + 1),
        ts=T0 + datetime.timedelta(milliseconds=10 * n),
        arguments=f'{{"n":{n}}}',
        meta={"surface": "cli"},
        **fields,  # type: ignore[arg-type]
    )


def _end(conversation: str, n: int, status: str = "ok") -> LedgerEvent:
    ended = T0 + datetime.timedelta(milliseconds=10 * n + 3)
    return LedgerEvent(
        conversation,
        f"r{n}",
        f"k{n}",
        "search_events",
        "end",
        id=uuid.UUID(int=2 * n + 2),
        started_at=T0 + datetime.timedelta(milliseconds=10 * n),
        ended_at=ended,
        duration_ms=3,
        status=status,
        error="not_found: no such event" if status == "error" else None,
        result_preview='{"events":[]}',
        result_bytes=13,
        exit_code=0,
    )


# Writes of a dispatcher-like caller: calls in flight across each other, two conversations, and one pair written in
# one transaction (the refused-input path), which always goes the full way.
WRITES: list[list[LedgerEvent]] = [
    [_start("a", 0)],
    [_end("a", 0)],
    [_start("a", 1)],
    [_start("a", 2)],
    [_end("a", 1, "error")],
    [_start("b", 3)],
    [_start("a", 4), _end("a", 4, "error")],
    [_end("a", 2)],
    [_end("b", 3)],
    [_start("a", 5)],
]


def _rows(target: str, redactor: Redactor) -> list[LedgerRow]:
    store = open_test_store(target, redactor, FakeClock())
    try:
        assert verify(store)["ok"] is True
        return list(store.iter_rows())
    finally:
        store.close()


GUESSING = pytest.mark.parametrize("backend", [pytest.param("postgresql", marks=pytest.mark.pg)], indirect=True)


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_sqlite_writes_every_row_by_the_full_path(store: LedgerStore, full_path: FullPathCount) -> None:
    for events in WRITES:
        assert all(r.inserted for r in store.insert_many(events))
    assert full_path.calls == len(WRITES)
    assert verify(store)["ok"] is True


@GUESSING
def test_guessed_rows_are_the_rows_of_the_full_path(
    ledger_target: str, twin_target: str, redactor: Redactor, full_path: FullPathCount
) -> None:
    store = open_test_store(ledger_target, redactor, FakeClock())
    for events in WRITES:
        assert all(r.inserted for r in store.insert_many(events))
    store.close()
    # Only each conversation's first write and the pair needed to read the head.
    assert full_path.calls == 3

    full_path.calls = 0
    for events in WRITES:
        fresh = open_test_store(twin_target, redactor, FakeClock())
        assert all(r.inserted for r in fresh.insert_many(events))
        fresh.close()
    assert full_path.calls == len(WRITES)
    assert _rows(ledger_target, redactor) == _rows(twin_target, redactor)


@GUESSING
def test_a_head_moved_by_another_store_falls_back_and_chains_after_it(
    ledger_target: str, redactor: Redactor, full_path: FullPathCount
) -> None:
    ours = open_test_store(ledger_target, redactor, FakeClock())
    theirs = open_test_store(ledger_target, redactor, FakeClock())
    begun = ours.insert(_start("a", 0)).row
    theirs.insert(_start("a", 1))
    foreign = theirs.insert(_end("a", 1)).row
    full_path.calls = 0

    ended = ours.insert(_end("a", 0)).row
    assert full_path.calls == 1
    assert (ended.seq, ended.chain_seq, ended.prev_hash) == (begun.seq, 4, foreign.row_hash)
    # The full path left the fresh head behind, so the next write is guessed again.
    later = ours.insert(_start("a", 2)).row
    assert full_path.calls == 1 and (later.seq, later.chain_seq, later.prev_hash) == (3, 5, ended.row_hash)
    assert [r.chain_seq for r in ours.list_by_conversation("a")] == [1, 2, 3, 4, 5]
    assert verify(ours)["ok"] is True
    ours.close()
    theirs.close()


def test_a_stale_end_whose_start_is_remembered_keeps_its_seq(ledger_target: str, redactor: Redactor) -> None:
    ours = open_test_store(ledger_target, redactor, FakeClock())
    theirs = open_test_store(ledger_target, redactor, FakeClock())
    begun = ours.insert(_start("a", 0)).row
    for n in (1, 2):
        theirs.insert(_start("a", n))
    ended = ours.insert(_end("a", 0)).row
    assert ended.seq == begun.seq == 1 and ended.chain_seq == 4
    assert ours.insert(_start("a", 3)).row.seq == 4
    assert verify(ours)["ok"] is True
    ours.close()
    theirs.close()


def test_a_remembered_head_of_a_deleted_conversation_is_refused(
    store: LedgerStore, admin: SqliteAdmin | PgAdmin, full_path: FullPathCount
) -> None:
    row = store.insert(_start("a", 0)).row
    store.insert(end_event(row, ended_at=row.ts, duration_ms=0, status="ok"))
    store.insert(_start("b", 1))
    admin.delete_conversation("a")
    full_path.calls = 0
    for attempt in range(2):
        with pytest.raises(LedgerIntegrityError, match="conversation a was deleted"):
            store.insert(_start("a", 2 + attempt))
    assert full_path.calls == 2
    assert store.list_by_conversation("a") == []
    assert [t.conversation_id for t in store.tombstones()] == ["a"]
    assert store.insert(_end("b", 1)).inserted
    assert verify(store)["ok"] is True


def test_a_taken_key_under_an_unchanged_head_returns_the_stored_row(store: LedgerStore, full_path: FullPathCount) -> None:
    first = store.insert(_start("a", 0)).row
    full_path.calls = 0
    again = store.insert(LedgerEvent("a", "r0", "k0", "search_events", "start", arguments="other"))
    retry = store.insert(_start("a", 0))
    assert (again.inserted, again.row) == (False, first)
    assert (retry.inserted, retry.row) == (True, first)
    assert full_path.calls == 2 and len(store.list_by_conversation("a")) == 1


def _batch(conversations: Sequence[str], calls: int) -> list[LedgerEvent]:
    events: list[LedgerEvent] = []
    for n in range(calls):
        conversation = conversations[n % len(conversations)]
        events.append(_start(conversation, n))
        if n % 2:
            events.append(_end(conversation, n))
    return events


def test_batches_of_many_statements_write_the_rows_of_single_writes(
    ledger_target: str, twin_target: str, redactor: Redactor
) -> None:
    events = _batch(["a", "b", "c"], 90)
    assert len(events) > 2 * sqlcore._INSERT_CHUNK and len(events) % sqlcore._INSERT_CHUNK
    batched = open_test_store(ledger_target, redactor, FakeClock())
    stored = batched.insert(events[0]).row
    results = batched.insert_many([*events[1:], events[0]])
    keys = [(e.conversation_id, e.request_id, e.tool_call_id, e.event) for e in [*events[1:], events[0]]]
    assert [r.row.key for r in results] == keys
    assert all(r.inserted for r in results[:-1]) and results[-1].row == stored
    batched.close()

    single = open_test_store(twin_target, redactor, FakeClock())
    for event in events:
        single.insert(event)
    single.close()
    assert _rows(ledger_target, redactor) == _rows(twin_target, redactor)
