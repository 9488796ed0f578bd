"""Full results stored with their end rows (docs/ledger.md §11.3), the import of the sidecar files written before
(schema 2 on SQLite), and SQLite's group commit (docs/ledger.md §10); docs/decisions.md, "Ledger storage and group
commit"."""

from __future__ import annotations

import hashlib
import threading
import time
from pathlib import Path

import pytest
from ledger_support import FakeClock, open_test_store

from harness import files
from harness.ledger import commands, migrations
from harness.ledger.errors import LedgerIntegrityError
from harness.ledger.model import LedgerEvent, end_event
from harness.ledger.settings import LedgerSettings
from harness.ledger.sidecars import sidecar_relpath
from harness.ledger.sqlite import SqliteStore
from harness.ledger.store import LedgerStore
from harness.ledger.verify import verify
from harness.text.redact import Redactor

BODY = '{"payload":"' + "x" * 5000 + '"}'


def _start(conversation: str, n: int) -> LedgerEvent:
    return LedgerEvent(conversation, f"r{n}", f"k{n}", "search_events", "start", arguments="{}")


def test_a_stored_result_is_redacted_capped_and_described_by_the_chained_meta(
    store: LedgerStore, redactor: Redactor
) -> None:
    begun = store.insert(_start("a", 0)).row
    secret_body = BODY + " password=hunter2-not-a-real-one"
    end = store.insert(
        end_event(begun, ended_at=begun.ts, duration_ms=1, status="ok", result_preview=secret_body, sidecar=secret_body)
    ).row
    with store.snapshot() as snap:
        stored = snap.sidecar(end.id)
    assert stored is not None and "hunter2" not in stored and "[REDACTED:" in stored
    data = stored.encode()
    assert end.result_sidecar_path == sidecar_relpath("a", end.id) and end.result_truncated is True
    assert end.meta_object == {
        "sidecar_bytes": len(data),
        "sidecar_sha256": hashlib.sha256(data).hexdigest(),
        "sidecar_capped": False,
    }
    report = verify(store, sidecar_root=Path("/nonexistent"))
    assert (report["ok"], report["sidecars_checked"]) == (True, 1)


def test_a_result_that_names_its_own_path_or_meta_is_refused(store: LedgerStore) -> None:
    begun = store.insert(_start("a", 0)).row
    base = {"ended_at": begun.ts, "duration_ms": 1, "status": "ok", "result_preview": BODY, "sidecar": BODY}
    with pytest.raises(Exception, match="names a stored result itself"):
        store.insert(end_event(begun, result_sidecar_path="sidecars/x", **base))
    with pytest.raises(Exception, match="sidecar_sha256 describe the stored result"):
        store.insert(end_event(begun, meta={"sidecar_sha256": "0" * 64}, **base))
    with store.snapshot() as snap:
        assert snap.count_sidecars() == 0


def _write_legacy_workspace(workspace: Path, redactor: Redactor, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """A schema-2 ledger and its sidecar files as the recorder wrote them before: file first, then the end row."""
    path = str(workspace / "ledger.sqlite3")
    previous = migrations.shipped("sqlite")[:2]
    relpaths = []
    with monkeypatch.context() as previous_release:
        previous_release.setattr(migrations, "shipped", lambda backend: previous)
        store = open_test_store(path, redactor, FakeClock())
        for n, conversation in enumerate(["a", "a", "b"]):
            begun = store.insert(_start(conversation, n)).row
            content = (BODY + str(n)).encode()
            end = end_event(
                begun,
                ended_at=begun.ts,
                duration_ms=1,
                status="ok",
                result_preview=BODY,
                result_bytes=len(content),
                result_truncated=True,
                result_sidecar_path=sidecar_relpath(conversation, begun.id),
                meta={"sidecar_bytes": len(content), "sidecar_sha256": hashlib.sha256(content).hexdigest()},
            )
            target = workspace / end.result_sidecar_path
            target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            files.write_private(target, [content])
            store.insert(end)
            relpaths.append(end.result_sidecar_path)
        assert store.schema_version() == 2
        store.close()
    return relpaths


def test_a_workspace_with_sidecar_files_migrates_and_verifies(
    tmp_path: Path, redactor: Redactor, monkeypatch: pytest.MonkeyPatch
) -> None:
    relpaths = _write_legacy_workspace(tmp_path, redactor, monkeypatch)
    ledger = str(tmp_path / "ledger.sqlite3")
    # Before the import the files themselves are checked, whatever the schema.
    reader = open_test_store(ledger, redactor, FakeClock())
    assert verify(reader, sidecar_root=tmp_path)["ok"] is True
    reader.close()
    altered = tmp_path / relpaths[2]
    altered.write_bytes(altered.read_bytes().replace(b"x", b"y", 1))

    report = commands.migrate(
        tmp_path / "ledger.sqlite3", clock=FakeClock(), settings=LedgerSettings(), redactor=redactor, workspace=tmp_path
    )
    assert report["sidecars"]["imported"] == 2
    assert [(p["conversation_id"], p["chain_seq"]) for p in report["sidecars"]["left"]] == [("b", 2)]
    assert not (tmp_path / relpaths[0]).exists() and not (tmp_path / relpaths[0]).parent.exists()
    assert altered.exists()

    store = open_test_store(ledger, redactor, FakeClock())
    after = verify(store, sidecar_root=tmp_path)
    assert after["sidecars_checked"] == 3
    assert [(p["conversation_id"], p["kind"]) for p in after["problems"]] == [("b", "sidecar_mismatch")]
    ends = [r for r in store.iter_rows() if r.event == "end"]
    with store.snapshot() as snap:
        assert [snap.sidecar(r.id) for r in ends[:2]] == [BODY + "0", BODY + "1"]
    # The altered file, restored, is imported by the next migrate; nothing is imported twice.
    altered.write_bytes((BODY + "2").encode())
    again = commands.migrate(
        tmp_path / "ledger.sqlite3", clock=FakeClock(), settings=LedgerSettings(), redactor=redactor, workspace=tmp_path
    )
    assert again["sidecars"] == {"imported": 1, "left": []} and not (tmp_path / "sidecars").exists()
    assert verify(store, sidecar_root=tmp_path)["ok"] is True
    store.close()


def _held_group(store: SqliteStore, writes: int, run: list[threading.Thread]) -> None:
    """Hold the writer lock until `writes` writes are queued, so that they commit as one group."""
    for t in run:
        t.start()
    while len(store._queue) < writes:
        time.sleep(0.001)


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_writes_that_arrive_together_share_one_commit_and_fail_alone(store: SqliteStore) -> None:
    commits: list[str] = []
    assert store._writer is not None
    store._writer.set_trace_callback(lambda sql: commits.append(sql) if sql == "COMMIT" else None)
    outcomes: dict[str, object] = {}

    def write(name: str, event: LedgerEvent) -> None:
        try:
            outcomes[name] = store.insert(event).row
        except LedgerIntegrityError as exc:
            outcomes[name] = exc

    orphan = LedgerEvent("z", "r9", "k9", "search_events", "end", ended_at=FakeClock()(), duration_ms=0, status="ok")
    threads = [threading.Thread(target=write, args=(f"c{n}", _start(f"c{n}", n))) for n in range(8)]
    threads.append(threading.Thread(target=write, args=("orphan", orphan)))
    with store._lock:
        _held_group(store, len(threads), threads)
    for t in threads:
        t.join()
    # Every start was committed (and synced) before its insert returned; one COMMIT covered all nine writes.
    assert commits == ["COMMIT"]
    assert isinstance(outcomes.pop("orphan"), LedgerIntegrityError)
    assert sorted(r.conversation_id for r in outcomes.values()) == [f"c{n}" for n in range(8)]  # type: ignore[attr-defined]
    assert [h.conversation_id for h in store.heads()] == [f"c{n}" for n in range(8)]
    assert verify(store)["ok"] is True
