"""Shared helpers for the store tests: invariant checks (docs/investigate.md §3.1) and small builders."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from harness.store import Store
from harness.store.reader import list_segments
from harness.store.streams import STREAMS, decode_line

GIT_ENV = {
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
    "HOME": "/nonexistent",
    "PATH": "/usr/bin:/bin",
    "GIT_AUTHOR_NAME": "test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
}


def git(git_dir: Path, *args: str, stdin: bytes | None = None, env: dict[str, str] | None = None) -> str:
    """Run real git on a store from a test (outside the harness runner)."""
    done = subprocess.run(
        ["git", *args], input=stdin, capture_output=True, check=True, env={**GIT_ENV, "GIT_DIR": str(git_dir), **(env or {})}
    )
    return done.stdout.decode()

# The four lines of docs/investigate.md §11's `ev.jsonl`.
EV_LINES = [
    '{"ID":"evt-1","Source":"azure","EventType":"container_restart","Actor":"deploy-svc","Timestamp":"2026-04-10T02:05:00Z","Action":"restart","Target":"web-01","Metadata":{"maintenance_window":true,"window_id":"mw-7"}}',
    '{"id":"evt-2","source":"azure","event-type":"container_restart","actor":"deploy-svc","timestamp":"2026-04-10T04:10:00+02:00","action":"restart","target":"web-02","metadata":{"maintenance_window":true}}',
    '{"-id":"evt-3","-source":"github","-type":"push","-actor":"baron","-timestamp":"2026-04-10T09:00:00Z","payload":{"ref":"main"}}',
    '{"Id":"evt-4","source":"azure","type":"login","actor":"baron","timestamp":"2026-04-09T12:00:00.250Z","payload":{"ip":"203.0.113.5","geo":"US"}}',
]


def event(record_id: str, **fields: Any) -> dict[str, Any]:
    """A small valid event."""
    return {"id": record_id, "timestamp": "2026-04-10T09:00:00Z", **fields}


def check_invariants(store: Store) -> None:
    """Assert every docs/investigate.md §3.1 invariant of the store at HEAD and over its whole history."""
    handle = store.git()
    if handle is None:
        return
    head = handle.head_commit()
    if not head:
        return
    history = handle.run("rev-list", "--parents", head).decode().split("\n")
    entries = [line.split() for line in history if line]
    assert sum(1 for entry in entries if len(entry) == 1) == 1, "exactly one root commit"
    assert all(len(entry) <= 2 for entry in entries), "every commit has at most one parent"
    for entry in entries:
        changed = handle.run("diff-tree", "--no-commit-id", "--name-only", "-r", "--root", entry[0]).decode().split()
        assert len({path.split("/")[0] for path in changed}) == 1, f"commit {entry[0]} touches one stream"
    listing = list_segments(handle, head, list(STREAMS))
    with handle.blobs() as blobs:
        for name, segments in listing.items():
            spec = STREAMS[name]
            seen: set[str] = set()
            for number, segment in enumerate(segments, start=1):
                assert segment.number == number
                data = blobs.read(segment.blob)
                assert data.endswith(b"\n")
                lines = data[:-1].split(b"\n")
                if len(lines) > 1:
                    assert len(lines) <= store.limits.max_records
                    assert len(data) <= store.limits.max_bytes
                for line in lines:
                    record = decode_line(spec, line)
                    if spec.keyed:
                        assert record["id"].lower() not in seen
                        seen.add(record["id"].lower())


def stream_ids(store: Store, stream: str = "events") -> list[str]:
    """Stored ids in stream order, read by full replay."""
    return [record["id"] for record in store.replay().records(stream)]


def canonical(value: Any) -> str:
    """Canonical JSON of a test value, for byte comparisons."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def commit_files(git_dir: Path, files: dict[str, bytes], *, branch: str = "refs/heads/main") -> str:
    """Commit exactly `files` (path -> bytes) on top of `branch` with plain git, bypassing the harness."""
    index = git_dir / "test-index"
    env = {"GIT_INDEX_FILE": str(index)}
    try:
        git(git_dir, "read-tree", "--empty", env=env)
        entries = ""
        for path, data in files.items():
            blob = git(git_dir, "hash-object", "-w", "--stdin", stdin=data).strip()
            entries += f"100644 blob {blob}\t{path}\n"
        git(git_dir, "update-index", "--add", "--index-info", stdin=entries.encode(), env=env)
        tree = git(git_dir, "write-tree", env=env).strip()
    finally:
        index.unlink(missing_ok=True)
    done = subprocess.run(
        ["git", "rev-parse", "-q", "--verify", branch], capture_output=True, env={**GIT_ENV, "GIT_DIR": str(git_dir)}
    )
    parent = ["-p", done.stdout.decode().strip()] if done.returncode == 0 else []
    commit = git(git_dir, "commit-tree", tree, *parent, "-m", "test").strip()
    git(git_dir, "update-ref", branch, commit)
    return commit


def line(record_id: str, **fields: Any) -> bytes:
    """The canonical stored line of a small event."""
    from harness.store.streams import STREAMS, encode_record

    return encode_record(STREAMS["events"], event(record_id, **fields))[1]
