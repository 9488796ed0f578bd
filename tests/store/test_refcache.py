"""HEAD without a subprocess per call (issue 11, docs/decisions.md): the ref-identity cache answers as git does,
and a ref moved by another process is seen on the next call."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from store_support import event, git

from harness.errors import UpstreamUnavailable
from harness.store import Store
from harness.store.git import Git, init_bare

AGED_NS = 10_000_000_000


def _age(git_dir: Path, mtime_ns: int | None = None) -> int:
    """Backdate HEAD's files past the racy window (as a store untouched for a while is); returns the mtime set."""
    stamp = mtime_ns if mtime_ns is not None else time.time_ns() - AGED_NS
    for name in ("HEAD", "refs/heads/main", "refs/heads/other", "packed-refs"):
        if (git_dir / name).exists():
            os.utime(git_dir / name, ns=(stamp, stamp))
    return stamp


def _append_elsewhere(store_path: Path, record_id: str) -> None:
    """A commit by ingest in a second process, through the store's own write path."""
    script = (
        "import json, sys\nfrom pathlib import Path\nfrom harness.store import Store\n"
        "Store(Path(sys.argv[1])).append_batch('events', [json.loads(sys.argv[2])])\n"
    )
    subprocess.run([sys.executable, "-c", script, str(store_path), json.dumps(event(record_id))], check=True)


def _git_head(git_dir: Path) -> tuple[str, str]:
    return git(git_dir, "symbolic-ref", "HEAD").strip(), git(git_dir, "rev-parse", "HEAD^{commit}").strip()


def _warm(store: Store) -> Git:
    found = store.git()
    assert found is not None
    _age(found.git_dir)
    found.head()
    return found


def test_warm_head_is_served_without_git_and_matches_git(store: Store) -> None:
    store.append_batch("events", [event("e1")])
    runner = _warm(store)
    resolved = runner.head_resolutions
    for _ in range(5):
        assert runner.head() == _git_head(runner.git_dir)
    assert runner.head_resolutions == resolved
    with store.snapshot() as view:
        assert view.commit == _git_head(runner.git_dir)[1]


def test_fresh_ref_files_are_not_cached(store: Store) -> None:
    store.append_batch("events", [event("e1")])
    runner = store.git()
    assert runner is not None
    runner.head()
    resolved = runner.head_resolutions
    runner.head()
    assert runner.head_resolutions == resolved + 1


def test_commit_from_another_process_is_seen_even_with_the_same_size_and_mtime(store: Store) -> None:
    store.append_batch("events", [event("e1")])
    runner = _warm(store)
    cached_mtime = (runner.git_dir / "refs/heads/main").stat().st_mtime_ns
    _append_elsewhere(store.path, "e2")
    # Only the inode now tells the new ref file from the cached one: same size (one oid line), same mtime.
    _age(runner.git_dir, cached_mtime)
    assert runner.head() == _git_head(runner.git_dir)
    with store.snapshot() as view:
        assert [record["id"] for record in view.records("events")] == ["e1", "e2"]


def test_packed_refs_and_a_commit_after_packing_are_seen(store: Store) -> None:
    first = store.append_batch("events", [event("e1")]).commit
    runner = _warm(store)
    git(runner.git_dir, "pack-refs", "--all", "--prune")
    assert not (runner.git_dir / "refs/heads/main").exists()
    assert runner.head() == ("refs/heads/main", first)
    _age(runner.git_dir)
    assert runner.head() == ("refs/heads/main", first)
    resolved = runner.head_resolutions
    assert runner.head() == ("refs/heads/main", first)
    assert runner.head_resolutions == resolved
    _append_elsewhere(store.path, "e2")
    _age(runner.git_dir)
    assert runner.head() == _git_head(runner.git_dir)
    assert runner.head()[1] != first


def test_symbolic_ref_moved_to_another_branch_is_seen(store: Store) -> None:
    first = store.append_batch("events", [event("e1")]).commit
    second = store.append_batch("events", [event("e2")]).commit
    runner = store.git()
    assert runner is not None
    git(runner.git_dir, "update-ref", "refs/heads/other", first)
    _warm(store)
    assert runner.head() == ("refs/heads/main", second)
    git(runner.git_dir, "symbolic-ref", "HEAD", "refs/heads/other")
    _age(runner.git_dir)
    assert runner.head() == ("refs/heads/other", first)


def test_detached_head_is_refused_on_every_call(store: Store) -> None:
    first = store.append_batch("events", [event("e1")]).commit
    runner = _warm(store)
    git(runner.git_dir, "update-ref", "--no-deref", "HEAD", first)
    _age(runner.git_dir)
    for _ in range(2):
        with pytest.raises(UpstreamUnavailable, match="HEAD is detached"):
            runner.head()


def test_unborn_branch_then_first_commit_from_another_process(tmp_path: Path) -> None:
    runner = Git(init_bare(tmp_path / "store"))
    _age(runner.git_dir)
    assert runner.head() == ("refs/heads/main", None)
    resolved = runner.head_resolutions
    assert runner.head() == ("refs/heads/main", None)
    assert runner.head_resolutions == resolved
    _append_elsewhere(tmp_path / "store", "e1")
    assert runner.head() == _git_head(runner.git_dir)


def test_symbolic_loose_ref_is_answered_by_git(store: Store) -> None:
    commit = store.append_batch("events", [event("e1")]).commit
    runner = store.git()
    assert runner is not None
    git(runner.git_dir, "update-ref", "refs/heads/other", commit)
    git(runner.git_dir, "symbolic-ref", "refs/heads/alias", "refs/heads/other")
    git(runner.git_dir, "symbolic-ref", "HEAD", "refs/heads/alias")
    _age(runner.git_dir)
    os.utime(runner.git_dir / "refs/heads/alias", ns=(time.time_ns() - AGED_NS,) * 2)
    expected = runner._resolve_head()
    resolved = runner.head_resolutions
    assert runner.head() == expected
    assert runner.head() == expected
    assert runner.head_resolutions == resolved + 2
