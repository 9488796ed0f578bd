"""The locked-down git layer (docs/investigate.md §3.1, docs/investigate.md §3.2): hostile configuration and hooks have no effect."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest
from store_support import check_invariants, event, git

from harness.errors import UpstreamUnavailable
from harness.store import RecordFilter, Store
from harness.store.git import git_executable


def _marker_script(path: Path, marker_dir: Path, name: str) -> Path:
    path.write_text(f"#!/bin/sh\ntouch {marker_dir}/{name}\nexit 0\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


HOOK_NAMES = ("reference-transaction", "pre-commit", "post-commit", "post-index-change", "pre-auto-gc", "post-update")


def _hooks_dir(directory: Path, marker_dir: Path, prefix: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for name in HOOK_NAMES:
        _marker_script(directory / name, marker_dir, f"{prefix}-{name}")
    return directory


def test_hostile_global_config_repo_config_and_hooks_have_no_effect(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    home = tmp_path / "home"
    evil_hooks = _hooks_dir(tmp_path / "evil-hooks", markers, "global")
    tool = _marker_script(tmp_path / "tool.sh", markers, "tool")
    hostile = (
        f"[core]\n\thooksPath = {evil_hooks}\n\tfsmonitor = {tool}\n\tpager = {tool}\n"
        f"[alias]\n\thash-object = !{tool}\n\tcommit-tree = !{tool}\n"
        f"[gc]\n\tauto = 1\n[commit]\n\tgpgSign = true\n[gpg]\n\tprogram = {tool}\n"
        "[user]\n\tname = mallory\n\temail = mallory@example.invalid\n"
    )
    home.mkdir()
    (home / ".gitconfig").write_text(hostile)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    monkeypatch.setenv("GIT_OBJECT_DIRECTORY", str(tmp_path / "elsewhere"))
    monkeypatch.setenv("GIT_INDEX_FILE", str(tmp_path / "evil-index"))

    store = Store(tmp_path / "store")
    store.append_batch("events", [event("e1")])
    git_dir = store.git().git_dir  # type: ignore[union-attr]
    # The repository itself is hostile too: hooks in its hooks dir and a config naming them.
    _hooks_dir(git_dir / "hooks", markers, "repo")
    with open(git_dir / "config", "a") as config:
        config.write(f"[core]\n\thooksPath = {evil_hooks}\n\tfsmonitor = {tool}\n[commit]\n\tgpgSign = true\n")

    result = store.append_batch("events", [event("e2"), event("e3")])
    with store.snapshot() as view:
        assert [r["id"] for r in view.select("events", RecordFilter(), 10).records] == ["e1", "e2", "e3"]

    assert sorted(os.listdir(markers)) == []
    assert not (tmp_path / "elsewhere").exists()
    assert not (tmp_path / "evil-index").exists()
    author = git(git_dir, "log", "-1", "--format=%an <%ae>|%cn <%ce>|%s", result.commit).strip()
    assert author == "harness-store <store@harness.invalid>|harness-store <store@harness.invalid>|store: append events (n=2)"
    check_invariants(store)


def test_missing_store_reads_empty_and_first_write_creates_a_bare_repository(tmp_path: Path) -> None:
    store = Store(tmp_path / "ws" / "store")
    with store.snapshot() as view:
        assert view.commit == ""
        assert view.select("events", RecordFilter(), 10).total == 0
        assert view.latest_baseline() is None
    assert not (tmp_path / "ws").exists()
    store.append_batch("events", [event("e1")])
    git_dir = tmp_path / "ws" / "store"
    assert git(git_dir, "rev-parse", "--is-bare-repository").strip() == "true"
    assert git(git_dir, "symbolic-ref", "HEAD").strip() == "refs/heads/main"
    assert not (git_dir / "hooks").exists() or not os.listdir(git_dir / "hooks")
    assert not (git_dir / "index").exists()
    parents = git(git_dir, "rev-list", "--parents", "HEAD").split()
    assert len(parents) == 1


def test_an_empty_directory_is_a_missing_store(tmp_path: Path) -> None:
    (tmp_path / "store").mkdir()
    store = Store(tmp_path / "store")
    with store.snapshot() as view:
        assert view.commit == ""
    store.append_batch("events", [event("e1")])
    assert store.head()


def test_an_existing_non_bare_repository_is_used_without_touching_its_work_tree(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", "-b", "trunk", str(repo)], check=True, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    (repo / "README").write_text("keep me\n")
    store = Store(repo)
    store.append_batch("events", [event("e1")])
    assert sorted(os.listdir(repo)) == [".git", "README"]
    assert not (repo / ".git" / "index").exists()
    assert git(repo / ".git", "ls-tree", "-r", "--name-only", "refs/heads/trunk").split() == ["events/00000001.jsonl"]
    check_invariants(store)


def test_detached_head_is_refused_for_reads_and_writes(store: Store) -> None:
    store.append_batch("events", [event("e1")])
    git_dir = store.git().git_dir  # type: ignore[union-attr]
    git(git_dir, "update-ref", "--no-deref", "HEAD", store.head())
    with pytest.raises(UpstreamUnavailable, match=r"^store unavailable: HEAD is detached$"):
        with store.snapshot():
            pass
    with pytest.raises(UpstreamUnavailable, match=r"^store unavailable: HEAD is detached$"):
        store.append_batch("events", [event("e2")])


def test_a_directory_that_is_not_a_repository_is_refused(tmp_path: Path) -> None:
    (tmp_path / "store").mkdir()
    (tmp_path / "store" / "notes.txt").write_text("x")
    store = Store(tmp_path / "store")
    with pytest.raises(UpstreamUnavailable, match=r"^store unavailable: not a git repository$"):
        with store.snapshot():
            pass
    with pytest.raises(UpstreamUnavailable, match=r"^store unavailable: not a git repository$"):
        store.append_batch("events", [event("e1")])


def test_git_missing_from_path_is_upstream_unavailable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    git_executable.cache_clear()
    monkeypatch.setenv("PATH", str(empty))
    try:
        with pytest.raises(UpstreamUnavailable, match=r"^store unavailable: git executable not found$"):
            Store(tmp_path / "store").append_batch("events", [event("e1")])
    finally:
        monkeypatch.undo()
        git_executable.cache_clear()
    assert os.path.isabs(git_executable())
