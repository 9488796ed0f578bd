"""Chain verification and exported heads (docs/ledger.md §8.3 and §8.4)."""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import json
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from harness.ledger import catalog, chain, ids, sidecars
from harness.ledger.catalog import SchemaObject
from harness.ledger.model import LedgerRow, format_ts
from harness.ledger.records import ConversationInfo, Head, Tombstone
from harness.ledger.store import LedgerStore, Snapshot
from harness.text import canonjson, redact

HEADS_FORMAT = "triage-harness/ledger-heads"
HEADS_VERSION = 1
MAX_PROBLEMS = 1000
_HEX32 = re.compile(r"[0-9a-f]{64}")


class HeadsFormatError(ValueError):
    """A heads document that is malformed or whose digest does not match its heads."""


@dataclasses.dataclass(frozen=True)
class Problem:
    """One verification finding: the first per conversation, or one per schema object (no conversation)."""

    conversation_id: str | None
    chain_seq: int | None
    kind: str
    detail: str

    def to_json(self) -> dict[str, Any]:
        """The problem object of the verify report."""
        return dataclasses.asdict(self)


def _heads_json(heads: Iterable[Head]) -> list[dict[str, Any]]:
    ordered = sorted(heads, key=lambda h: h.conversation_id)
    return [
        {"conversation_id": h.conversation_id, "chain_seq": h.chain_seq, "row_hash": h.row_hash.hex()} for h in ordered
    ]


def heads_document(heads: Iterable[Head], *, backend: str, exported_at: datetime.datetime) -> dict[str, Any]:
    """The docs/ledger.md §8.4 heads document; `digest` is the SHA-256 of the canonical JSON of `heads` alone."""
    listed = _heads_json(heads)
    return {
        "format": HEADS_FORMAT,
        "version": HEADS_VERSION,
        "backend": backend,
        "exported_at": format_ts(exported_at),
        "heads": listed,
        "digest": hashlib.sha256(canonjson.dumps_bytes(listed)).hexdigest(),
    }


def parse_heads_document(text: str) -> list[Head]:
    """The heads of an exported document; refuses a wrong format, a malformed head or a digest that does not match."""
    try:
        doc = canonjson.loads_strict(text)
    except ValueError as exc:
        raise HeadsFormatError(f"not a JSON document: {exc}") from exc
    if not isinstance(doc, dict) or doc.get("format") != HEADS_FORMAT or doc.get("version") != HEADS_VERSION:
        raise HeadsFormatError(f'expected "format": "{HEADS_FORMAT}" and "version": {HEADS_VERSION}')
    listed = doc.get("heads")
    if not isinstance(listed, list):
        raise HeadsFormatError('"heads" must be a list')
    heads = []
    for index, item in enumerate(listed):
        if (
            not isinstance(item, dict)
            or set(item) != {"conversation_id", "chain_seq", "row_hash"}
            or not ids.is_id(item["conversation_id"])
            or isinstance(item["chain_seq"], bool)
            or not isinstance(item["chain_seq"], int)
            or item["chain_seq"] < 1
            or not isinstance(item["row_hash"], str)
            or _HEX32.fullmatch(item["row_hash"]) is None
        ):
            raise HeadsFormatError(f"heads[{index}]: expected conversation_id, chain_seq >= 1 and a 64-hex row_hash")
        heads.append(Head(item["conversation_id"], item["chain_seq"], bytes.fromhex(item["row_hash"])))
    if len({h.conversation_id for h in heads}) != len(heads):
        raise HeadsFormatError("a conversation appears twice in heads")
    if hashlib.sha256(canonjson.dumps_bytes(listed)).hexdigest() != doc.get("digest"):
        raise HeadsFormatError("digest does not match the heads: the document was altered")
    return heads


def _sidecar_problem(snap: Snapshot, root: Path, row: LedgerRow) -> tuple[str, str] | None:
    """A stored result is checked in the snapshot; a row whose result is not stored there is of the sidecar format
    before schema 3 (SQLite) / 4 (PostgreSQL), not yet imported, and its file is checked instead."""
    path = row.result_sidecar_path or ""
    stored = snap.sidecar(row.id)
    if stored is not None:
        content, name = stored.encode("utf-8"), f"the stored result {path}"
    else:
        legacy = sidecars.read_legacy(root, path)
        if legacy.content is None:
            return ("sidecar_missing" if legacy.missing else "sidecar_mismatch"), legacy.problem
        content, name = legacy.content, path
    problem = sidecars.content_problem(row.meta_object or {}, content, name)
    return None if problem is None else ("sidecar_mismatch", problem)


def _meta_is_object(meta: str | None) -> bool:
    if meta is None:
        return True
    try:
        value = json.loads(meta)
    except ValueError:
        return False
    return isinstance(value, dict) and canonjson.dumps(value) == meta


class _ConversationCheck:
    """Streams one conversation's rows in chain order and keeps its first problem."""

    def __init__(
        self,
        conversation_id: str,
        *,
        hasher: Callable[[tuple[Any, ...]], bytes],
        max_redaction_version: int,
        head_seq: int | None,
        sidecar_root: Path | None,
        snap: Snapshot,
    ) -> None:
        self.conversation_id = conversation_id
        self._snap = snap
        self._hasher = hasher
        self._max_redaction_version = max_redaction_version
        self._head_seq = head_seq
        self._sidecar_root = sidecar_root
        self._expected = 1
        self._prev = chain.ZERO_HASH
        self._starts: dict[tuple[str, str], int] = {}
        self._ended: set[tuple[str, str]] = set()
        self.first_seq: int | None = None
        self.genesis_ts: datetime.datetime | None = None
        self.last_seq = 0
        self.hash_at_head: bytes | None = None
        self.rows = 0
        self.sidecars_checked = 0
        self.problem: Problem | None = None

    @property
    def open_calls(self) -> set[tuple[str, str]]:
        """The (request_id, tool_call_id) of each start without its end."""
        return self._starts.keys() - self._ended

    @property
    def in_flight(self) -> int:
        return len(self.open_calls)

    def _fail(self, chain_seq: int | None, kind: str, detail: str) -> None:
        self.problem = Problem(self.conversation_id, chain_seq, kind, detail)

    def feed(self, row: LedgerRow) -> None:
        self.rows += 1
        self.first_seq = row.chain_seq if self.first_seq is None else self.first_seq
        self.last_seq = row.chain_seq
        if row.chain_seq == 1:
            self.genesis_ts = row.ts
        call = (row.request_id, row.tool_call_id)
        if row.event == "start":
            self._starts[call] = row.seq
        else:
            self._ended.add(call)
        if row.chain_seq == self._head_seq:
            self.hash_at_head = row.row_hash
        if self.problem is None:
            self._check(row, call)

    def _check(self, row: LedgerRow, call: tuple[str, str]) -> None:
        k = row.chain_seq
        if k != self._expected:
            if k > self._expected:
                self._fail(self._expected, "gap", f"chain_seq {self._expected} is missing (next row has {k})")
            else:
                self._fail(k, "duplicate_seq", f"chain_seq {k} appears more than once")
            return
        self._expected += 1
        previous, self._prev = self._prev, row.row_hash
        if row.prev_hash != previous:
            self._fail(k, "link_mismatch", "prev_hash differs from the previous row's row_hash")
        elif self._hasher(row.chain_values()) != row.row_hash:
            self._fail(k, "hash_mismatch", "the recomputed row_hash differs from the stored one")
        elif row.event == "end" and self._starts.get(call) != row.seq:
            self._fail(k, "shape", "an end row without a start of the same call and seq before it")
        elif not 1 <= row.redaction_version <= self._max_redaction_version:
            self._fail(k, "shape", f"unknown redaction_version {row.redaction_version}")
        elif not _meta_is_object(row.meta):
            self._fail(k, "shape", "meta is not a canonical JSON object")
        elif self._sidecar_root is not None and row.result_sidecar_path is not None:
            self.sidecars_checked += 1
            found = _sidecar_problem(self._snap, self._sidecar_root, row)
            if found is not None:
                self._fail(k, *found)


def _head_problem(
    head: Head, check: _ConversationCheck | None, exists: bool, tombstones: Sequence[Tombstone]
) -> Problem | None:
    cid, seq = head.conversation_id, head.chain_seq
    if exists:
        last = check.last_seq if check is not None else 0
        if check is None or check.hash_at_head is None:
            return Problem(
                cid, last + 1, "head_behind", f"the exported head is at chain_seq {seq}, the ledger ends at {last}"
            )
        if check.hash_at_head != head.row_hash:
            return Problem(cid, seq, "head_mismatch", "the row at the exported head's chain_seq has another row_hash")
        return None
    if not tombstones:
        return Problem(cid, seq, "missing_conversation", "the conversation is gone and left no tombstone")
    for stone in tombstones:
        final = stone.final_chain_seq or 0
        if final > seq or (final == seq and stone.final_row_hash == head.row_hash):
            return None
    return Problem(cid, seq, "tombstone_mismatch", "no tombstone covers the exported head")


def _created_at_problem(info: ConversationInfo, check: _ConversationCheck | None) -> Problem | None:
    # The store dates a conversation by its first row; nothing else covers created_at.
    if check is None:
        return Problem(info.id, None, "created_at_mismatch", "the conversation has no rows to date its created_at")
    if check.genesis_ts is not None and check.genesis_ts != info.created_at:
        detail = f"created_at {format_ts(info.created_at)} differs from the ts of chain_seq 1"
        return Problem(info.id, 1, "created_at_mismatch", detail)
    return None


def _open_calls_problem(
    conversation_id: str, in_flight: set[tuple[str, str]], listed: set[tuple[str, str]]
) -> Problem | None:
    # open_calls is an index the triggers keep beside the chain (docs/decisions.md, "Open calls"); the chain decides.
    if listed == in_flight:
        return None
    missing, extra = sorted(in_flight - listed), sorted(listed - in_flight)
    if missing:
        request_id, tool_call_id = missing[0]
        first = f"open_calls leaves out call {tool_call_id} of request {request_id}, which has no end"
    else:
        request_id, tool_call_id = extra[0]
        first = f"open_calls lists call {tool_call_id} of request {request_id}, which has ended or never started"
    detail = f"{first} ({len(missing)} left out, {len(extra)} listed wrongly)"
    return Problem(conversation_id, None, "open_calls_mismatch", detail)


def _schema_problems(actual: frozenset[SchemaObject], expected: frozenset[SchemaObject]) -> list[Problem]:
    return [Problem(None, None, "schema_mismatch", note) for note in catalog.differences(actual, expected)]


def verify_snapshot(
    snap: Snapshot,
    *,
    backend: str,
    expected_catalog: frozenset[SchemaObject],
    conversation_ids: Sequence[str] | None = None,
    heads: Sequence[Head] | None = None,
    sidecar_root: Path | None = None,
    max_redaction_version: int | None = None,
    hasher: Callable[[tuple[Any, ...]], bytes] = chain.hash_values,
) -> dict[str, Any]:
    """The docs/ledger.md §8.3 report over one snapshot: schema differences first, then the first problem per conversation,
    sorted by conversation id.

    Known redaction versions run from 1 to the redactor's current one (`max_redaction_version` overrides).
    """
    if max_redaction_version is None:
        max_redaction_version = redact.RULESET_VERSION
    wanted = None if conversation_ids is None else set(conversation_ids)
    checked_heads = [h for h in heads or () if wanted is None or h.conversation_id in wanted]
    head_seqs = {h.conversation_id: h.chain_seq for h in checked_heads}
    infos = snap.conversations(conversation_ids)
    existing = {c.id for c in infos}
    tombstones = snap.tombstones()
    checks: dict[str, _ConversationCheck] = {}
    current: _ConversationCheck | None = None
    for row in snap.rows(conversation_ids):
        if current is None or current.conversation_id != row.conversation_id:
            current = checks[row.conversation_id] = _ConversationCheck(
                row.conversation_id,
                hasher=hasher,
                max_redaction_version=max_redaction_version,
                head_seq=head_seqs.get(row.conversation_id),
                sidecar_root=sidecar_root,
                snap=snap,
            )
        current.feed(row)

    problems: dict[str, Problem] = {}
    for cid, check in checks.items():
        if cid not in existing:
            detail = f"{check.rows} rows whose conversation row is missing"
            problems[cid] = Problem(cid, check.first_seq, "orphan_rows", detail)
        elif check.problem is not None:
            problems[cid] = check.problem
    for info in infos:
        if info.id not in problems:
            found = _created_at_problem(info, checks.get(info.id))
            if found is not None:
                problems[info.id] = found
    listed: dict[str, set[tuple[str, str]]] = {}
    for cid, request_id, tool_call_id in snap.open_calls(conversation_ids):
        listed.setdefault(cid, set()).add((request_id, tool_call_id))
    for cid in sorted(listed.keys() | checks.keys()):
        check = checks.get(cid)
        if cid not in problems:
            found = _open_calls_problem(cid, set() if check is None else check.open_calls, listed.get(cid, set()))
            if found is not None:
                problems[cid] = found
    for head in checked_heads:
        cid = head.conversation_id
        if cid not in problems:
            stones = [t for t in tombstones if t.conversation_id == cid]
            found = _head_problem(head, checks.get(cid), cid in existing, stones)
            if found is not None:
                problems[cid] = found
    ordered = _schema_problems(snap.catalog(), expected_catalog) + [problems[cid] for cid in sorted(problems)]
    return {
        "ok": not ordered,
        "backend": backend,
        "conversations": len(existing | checks.keys()),
        "rows": sum(c.rows for c in checks.values()),
        "tombstones": len(tombstones),
        "heads_checked": len(checked_heads),
        "sidecars_checked": sum(c.sidecars_checked for c in checks.values()),
        "in_flight": sum(c.in_flight for c in checks.values()),
        "problems": [p.to_json() for p in ordered[:MAX_PROBLEMS]],
        "truncated": len(ordered) > MAX_PROBLEMS,
    }


def verify(
    store: LedgerStore,
    *,
    conversation_ids: Sequence[str] | None = None,
    heads: Sequence[Head] | None = None,
    sidecar_root: Path | None = None,
    max_redaction_version: int | None = None,
) -> dict[str, Any]:
    """Verify the ledger within one read snapshot (docs/ledger.md §8.3)."""
    with store.snapshot() as snap:
        return verify_snapshot(
            snap,
            backend=store.backend,
            expected_catalog=store.expected_catalog(),
            conversation_ids=conversation_ids,
            heads=heads,
            sidecar_root=sidecar_root,
            max_redaction_version=max_redaction_version,
        )
