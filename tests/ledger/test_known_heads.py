"""KnownHeads (ledger/sqlcore.py): what a store remembers so that a single-row write needs no read first.

Pure: no database. The writes that use these guesses are tested against both backends in test_guessed_writes.py.
"""

from __future__ import annotations

from ledger_support import T0

from harness.ledger import chain
from harness.ledger.model import LedgerEvent, PreparedRow, build_row
from harness.ledger.records import InsertResult
from harness.ledger.redaction_boundary import prepare
from harness.ledger.sqlcore import KnownHead, KnownHeads, WriteOutcome
from harness.text.redact import Redactor

HEAD_HASH = bytes(range(32))


def _prepared(redactor: Redactor, event: str, call: str = "k1", conversation: str = "c") -> PreparedRow:
    fields = {} if event == "start" else {"ended_at": T0, "duration_ms": 0, "status": "ok"}
    return prepare(
        LedgerEvent(conversation, call, call, "search_events", event, ts=T0, **fields), redactor, redaction_version=1
    )


def _learned(heads: KnownHeads, conversation: str = "c", chain_seq: int = 7, max_seq: int = 3) -> None:
    heads.learn(WriteOutcome([], {conversation: KnownHead(chain_seq, HEAD_HASH, max_seq)}))


def test_without_a_head_there_is_no_guess(redactor: Redactor) -> None:
    assert KnownHeads().guess(_prepared(redactor, "start"), chain.hash_values) is None


def test_a_start_is_computed_against_the_remembered_head(redactor: Redactor) -> None:
    heads = KnownHeads()
    _learned(heads)
    p = _prepared(redactor, "start")
    guess = heads.guess(p, chain.hash_values)
    assert guess is not None
    assert guess.row == build_row(p, seq=4, chain_seq=8, prev_hash=HEAD_HASH)
    assert guess.outcome() == WriteOutcome([InsertResult(True, guess.row)], {"c": KnownHead(8, guess.row.row_hash, 4)})


def test_an_end_needs_the_seq_of_a_start_this_store_saw(redactor: Redactor) -> None:
    heads = KnownHeads()
    _learned(heads)
    assert heads.guess(_prepared(redactor, "end"), chain.hash_values) is None
    start = heads.guess(_prepared(redactor, "start"), chain.hash_values)
    assert start is not None
    heads.learn(start.outcome())
    end = heads.guess(_prepared(redactor, "end"), chain.hash_values)
    assert end is not None
    assert (end.row.seq, end.row.chain_seq, end.row.prev_hash) == (4, 9, start.row.row_hash)
    assert end.max_seq == 4
    heads.learn(end.outcome())
    # The end consumed its start: a second end goes the full way, which finds the stored one.
    assert heads.guess(_prepared(redactor, "end"), chain.hash_values) is None


def test_a_stored_start_found_by_the_full_path_is_remembered(redactor: Redactor) -> None:
    heads = KnownHeads()
    p = _prepared(redactor, "start")
    stored = build_row(p, seq=2, chain_seq=5, prev_hash=HEAD_HASH)
    heads.learn(WriteOutcome([InsertResult(False, stored)], {"c": KnownHead(9, HEAD_HASH, 4)}))
    end = heads.guess(_prepared(redactor, "end"), chain.hash_values)
    assert end is not None and (end.row.seq, end.row.chain_seq) == (2, 10)


def test_a_head_never_steps_back(redactor: Redactor) -> None:
    heads = KnownHeads()
    _learned(heads, chain_seq=7)
    _learned(heads, chain_seq=5)
    guess = heads.guess(_prepared(redactor, "start"), chain.hash_values)
    assert guess is not None and guess.row.chain_seq == 8


def test_forget_drops_the_head(redactor: Redactor) -> None:
    heads = KnownHeads()
    _learned(heads)
    heads.forget(["other", "c"])
    assert heads.guess(_prepared(redactor, "start"), chain.hash_values) is None


def test_memory_is_bounded_least_recently_written_first(redactor: Redactor) -> None:
    heads = KnownHeads(max_conversations=2, max_starts=2)
    for conversation in ("a", "b"):
        _learned(heads, conversation)
    _learned(heads, "a", chain_seq=8)
    _learned(heads, "c")
    assert heads.guess(_prepared(redactor, "start", conversation="b"), chain.hash_values) is None
    assert heads.guess(_prepared(redactor, "start", conversation="a"), chain.hash_values) is not None
    for call in ("k1", "k2", "k3"):
        start = heads.guess(_prepared(redactor, "start", call, conversation="a"), chain.hash_values)
        assert start is not None
        heads.learn(start.outcome())
    ended = [
        heads.guess(_prepared(redactor, "end", call, conversation="a"), chain.hash_values) for call in ("k1", "k3")
    ]
    assert ended[0] is None and ended[1] is not None


def test_the_guess_hashes_with_the_store_hasher(redactor: Redactor) -> None:
    heads = KnownHeads()
    _learned(heads)
    seen: list[tuple[object, ...]] = []

    def hasher(values: tuple[object, ...]) -> bytes:
        seen.append(values)
        return chain.ZERO_HASH

    guess = heads.guess(_prepared(redactor, "start"), hasher)
    assert guess is not None and guess.row.row_hash == chain.ZERO_HASH
    assert seen == [guess.row.chain_values()]
