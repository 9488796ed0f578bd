"""A watcher checkout for the render tests (docs/triage.md §16.1): a real git repository built at test time."""

from __future__ import annotations

import difflib
import hashlib
import os
import subprocess
from pathlib import Path
from typing import Any

RULES_PATH = "src/trustsight/rules.py"
RULES_LINE_WIDTH = 64
RULES_LINES = 48
LONG_NAME = "tests/" + "l" * 240 + ".py"
# Fixed identity and dates, so every fixture build has the same commit id.
GIT_ENV = {
    "PATH": os.environ.get("PATH", os.defpath),
    "HOME": "/nonexistent",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "fixture",
    "GIT_AUTHOR_EMAIL": "fixture@localhost.invalid",
    "GIT_COMMITTER_NAME": "fixture",
    "GIT_COMMITTER_EMAIL": "fixture@localhost.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    "LC_ALL": "C",
}


def rules_line(number: int) -> str:
    """Line `number` (from 1) of rules.py, newline included: exactly 64 bytes."""
    body = f'RULE_{number:03d} = "rule {number}"'
    return body + " " * (RULES_LINE_WIDTH - 1 - len(body)) + "\n"


def rules_text() -> str:
    """The 3,072-byte src/trustsight/rules.py of the fixture."""
    return "".join(rules_line(n) for n in range(1, RULES_LINES + 1))


FILES: dict[str, bytes] = {
    RULES_PATH: rules_text().encode(),
    "tests/test_rules.py": b"from trustsight import rules\n\n\ndef test_rules():\n    assert rules.RULE_001\n",
    "tests/fixtures/latin1.txt": "caf\u00e9 cr\u00e8me\n".encode("latin-1"),
    "src/trustsight/accent.txt": "abcdefghi\u00e9xyz".encode(),
    "src/trustsight/nul.py": b"a = 1\x00\n",
    "src/trustsight/.env": b"SECRET=x\n",
    "src/trustsight/pkg/__init__.py": b"",
    "src/trustsight/real/x.py": b"x = 1\n",
    "src/trustsight/tool.sh": b"#!/bin/sh\n",
    LONG_NAME: b"x = 1\n",
}
SYMLINKS: dict[str, str] = {
    "src/trustsight/link.py": "rules.py",
    "src/trustsight/ld": "real",
}


def git(repo: Path, *args: str) -> str:
    """Run git in the fixture repository with no user or system configuration."""
    done = subprocess.run(
        ["git", *args], cwd=repo, env=GIT_ENV, capture_output=True, text=True, check=True
    )
    return done.stdout


def make_watcher(path: Path) -> Path:
    """Create the watcher checkout at `path` with one commit; returns `path`."""
    path.mkdir(parents=True)
    git(path, "init", "--quiet", "--template=", "--initial-branch=main")
    for name, data in FILES.items():
        target = path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    (path / "src/trustsight/tool.sh").chmod(0o755)
    for name, target in SYMLINKS.items():
        os.symlink(target, path / name)
    git(path, "add", "--all")
    git(path, "commit", "--quiet", "-m", "watcher fixture")
    return path


def head(path: Path) -> str:
    """The checkout's HEAD commit id."""
    return git(path, "rev-parse", "HEAD").strip()


def tree_state(root: Path) -> dict[str, Any]:
    """Every entry under `root`, .git included: type, mode, size, mtime and content digest or link target."""
    state: dict[str, Any] = {}
    for directory, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            full = Path(directory) / name
            info = full.lstat()
            if full.is_symlink():
                content = "link:" + os.readlink(full)
            elif full.is_file():
                content = hashlib.sha256(full.read_bytes()).hexdigest()
            else:
                content = "dir"
            state[str(full.relative_to(root))] = (info.st_mode, info.st_size, info.st_mtime_ns, content)
    return state


def edit_diff(line: int, new_text: str, path: str = RULES_PATH) -> str:
    """A unified diff (three lines of context, as diff tools write) replacing line `line` of rules.py."""
    old = rules_text().splitlines(keepends=True)
    new = [*old[: line - 1], new_text + "\n", *old[line:]]
    return "".join(difflib.unified_diff(old, new, f"a/{path}", f"b/{path}"))


def creation_diff(path: str, lines: list[str]) -> str:
    """A diff that creates `path` with `lines`."""
    body = "".join(f"+{line}\n" for line in lines)
    return f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1,{len(lines)} @@\n{body}"
