"""The code-fix sandbox (docs/triage.md §11.5 steps 4-5, docs/triage.md §11.6): fixes applied by `git apply` in a throwaway clone.

The configured watcher checkout is only ever read, by `git clone`; every write happens in a fresh
0700 temporary directory that is removed before returning. Git runs with a replaced environment,
a fixed configuration, literal argument lists, per-call timeouts and capped output.
"""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Literal

from harness.triage.diffgate import DiffRejected, ScreenedDiff, place, screen
from harness.triage.verdict import CodeFix

SYSTEM_DIRS = ("/usr/local/bin", "/usr/bin", "/bin")
MAX_FILE_BYTES = 1_048_576
MAX_DETAIL_CHARS = 200
GIT_CONFIG = (
    "-c", "core.hooksPath=/dev/null",
    "-c", "core.fsmonitor=false",
    "-c", "core.autocrlf=false",
    "-c", "commit.gpgsign=false",
)  # fmt: skip
IDENTITY = ("-c", "user.name=triage-harness", "-c", "user.email=triage-harness@localhost.invalid")

NOT_CONFIGURED = "watcher checkout not configured"
NOT_A_REPOSITORY = "watcher checkout is not a git repository"
NO_GIT = "git is not available"
BUDGET_EXHAUSTED = "sandbox time budget exhausted"
NO_HEAD = "watcher checkout has no commit at HEAD"


@dataclass(frozen=True)
class Limits:
    """Time budgets and the output cap; tests shrink them."""

    call_timeout_s: float = 30.0
    total_s: float = 120.0
    output_cap: int = 65_536


@dataclass(frozen=True)
class FixOutcome:
    """What happened to one proposed fix; `index` counts from 1, counts are 0 unless applied."""

    index: int
    path: str
    status: Literal["applied", "rejected"]
    reason: str = ""
    added: int = 0
    removed: int = 0


@dataclass(frozen=True)
class SandboxReport:
    """Per-fix outcomes, the post-fix text of every applied path, and the base commit (None: no sandbox ran)."""

    base_commit: str | None
    fixes: tuple[FixOutcome, ...]
    files: dict[str, str] = field(default_factory=dict)


class _Fail(Exception):
    """Ends the current fix (or the sandbox setup) with `reason`."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def find_git(search_path: str) -> str | None:
    """The absolute path of `git` on `search_path`, or None."""
    found = shutil.which("git", path=search_path)
    return os.path.abspath(found) if found else None


def sandbox_env(git: str, home: Path) -> dict[str, str]:
    """The whole environment of every sandbox git call; nothing is inherited."""
    dirs = dict.fromkeys((os.path.dirname(git), *SYSTEM_DIRS))
    return {
        "PATH": os.pathsep.join(dirs),
        "HOME": str(home),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_ATTR_NOSYSTEM": "1",
        "GIT_NO_REPLACE_OBJECTS": "1",
        "LC_ALL": "C",
        "TZ": "UTC",
    }


def _drain(stream: IO[bytes], sink: bytearray, cap: int) -> None:
    # Keep reading past the cap so the child never blocks on a full pipe.
    while chunk := stream.read(8192):
        if len(sink) < cap:
            sink.extend(chunk[: cap - len(sink)])


def _printable(text: str) -> str:
    return "".join(ch if " " <= ch <= "~" else "?" for ch in text)


class _Git:
    """Runs git in the sandbox under the shared deadline; failures raise _Fail with the spec's wording."""

    def __init__(self, git: str, root: Path, limits: Limits, clock: Callable[[], float]) -> None:
        self.git = git
        self.root = root
        self.limits = limits
        self.clock = clock
        self.deadline = clock() + limits.total_s
        home = root / "home"
        home.mkdir(mode=0o700)
        self.env = sandbox_env(git, home)
        self._roots = sorted({str(root), os.path.realpath(root)}, key=len, reverse=True)

    def remaining(self) -> float:
        return self.deadline - self.clock()

    def detail(self, stderr: bytes, returncode: int) -> str:
        lines = stderr.decode("utf-8", "replace").splitlines()
        text = lines[0] if lines else f"git exited with status {returncode}"
        for root in self._roots:
            text = text.replace(root, "<sandbox>")
        return _printable(text)[:MAX_DETAIL_CHARS]

    def run(self, args: Sequence[str], cwd: Path, what: str) -> bytes:
        """Run `git <args>`; a non-zero exit raises `<what> failed: <detail>`."""
        remaining = self.remaining()
        if remaining <= 0:
            raise _Fail(BUDGET_EXHAUSTED)
        timeout = min(self.limits.call_timeout_s, remaining)
        try:
            proc = subprocess.Popen(
                [self.git, *GIT_CONFIG, *args],
                cwd=cwd,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:
            raise _Fail(f"{what} failed: {_printable(exc.strerror or type(exc).__name__)}") from None
        out, err = bytearray(), bytearray()
        readers = [
            threading.Thread(target=_drain, args=(proc.stdout, out, self.limits.output_cap), daemon=True),
            threading.Thread(target=_drain, args=(proc.stderr, err, self.limits.output_cap), daemon=True),
        ]
        for reader in readers:
            reader.start()
        try:
            returncode = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            if timeout < self.limits.call_timeout_s:
                raise _Fail(BUDGET_EXHAUSTED) from None
            raise _Fail(f"{what} failed: timed out after {timeout:g} s") from None
        finally:
            for reader in readers:
                reader.join()
            for stream in (proc.stdout, proc.stderr):
                if stream is not None:
                    stream.close()
        if returncode != 0:
            raise _Fail(f"{what} failed: {self.detail(bytes(err), returncode)}")
        return bytes(out)


def _target_problem(tree: Path, fix: ScreenedDiff) -> str:
    """docs/triage.md §11.5 step 4: an edit needs a regular UTF-8 file under real directories, a creation an absent path."""
    parts = fix.path.split("/")
    current = tree
    for part in parts[:-1]:
        current = current / part
        try:
            mode = os.lstat(current).st_mode
        except FileNotFoundError:
            return "" if fix.creation else "file does not exist at the watcher base commit"
        if not stat.S_ISDIR(mode):
            return (
                "a parent directory is a symlink or not a directory"
                if fix.creation
                else "target is a symlink or not a regular file"
            )
    target = current / parts[-1]
    try:
        info = os.lstat(target)
    except FileNotFoundError:
        return "" if fix.creation else "file does not exist at the watcher base commit"
    if fix.creation:
        return "file already exists at the watcher base commit"
    if not stat.S_ISREG(info.st_mode):
        return "target is a symlink or not a regular file"
    if info.st_size > MAX_FILE_BYTES:
        return f"target is larger than {MAX_FILE_BYTES:,} bytes"
    try:
        target.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        return "target is not UTF-8 text"
    return ""


def _changed_paths(porcelain: bytes) -> list[str]:
    entries = [entry for entry in porcelain.split(b"\0") if entry]
    return [entry[3:].decode("utf-8", "replace") for entry in entries]


def _result_text(tree: Path, path: str) -> str:
    """docs/triage.md §11.5 step 5 on the patched file: regular, not executable, strict UTF-8, at most 1 MiB."""
    target = tree / path
    try:
        info = os.lstat(target)
    except FileNotFoundError:
        raise _Fail("post-check failed: the fixed file does not exist") from None
    if not stat.S_ISREG(info.st_mode):
        raise _Fail("post-check failed: the fixed file is not a regular file")
    if info.st_mode & 0o111:
        raise _Fail("post-check failed: the fixed file is executable")
    if info.st_size > MAX_FILE_BYTES:
        raise _Fail(f"post-check failed: the fixed file is larger than {MAX_FILE_BYTES:,} bytes")
    try:
        return target.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise _Fail("post-check failed: the fixed file is not UTF-8 text") from None


def _check_placement(original: str, text: str, fix: ScreenedDiff) -> None:
    """Accept what git wrote only if it is the proposed hunks at their proposed positions, nothing else.

    git apply moves a hunk whose context does not fit (offsets, and a zero-context hunk goes to the
    end of the file), so its success alone does not say the reviewer sees what lands.
    """
    try:
        expected = place(original, fix)
    except DiffRejected as exc:
        raise _Fail(f"post-check failed: {exc}") from None
    if text != expected:
        raise _Fail("post-check failed: git applied the hunks other than where their headers place them")


def _write_patch(directory: Path, index: int, diff: str) -> Path:
    patch = directory / f"fix-{index}.patch"
    fd = os.open(patch, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
        handle.write(diff if diff.endswith("\n") else diff + "\n")
    return patch


class _Sandbox:
    """One clone of the watcher checkout at its HEAD, with fixes applied and committed one by one."""

    def __init__(self, git: _Git, root: Path) -> None:
        self.git = git
        self.tree = root / "tree"
        self.patches = root / "patches"
        self.patches.mkdir(mode=0o700)
        # Set when a failed fix could not be undone: later fixes would land on a dirty tree.
        self.broken = ""

    def clone(self, watcher: Path) -> str:
        try:
            self.git.run(
                ("clone", "--quiet", "--no-hardlinks", "--no-checkout", "--", str(watcher), str(self.tree)),
                self.git.root,
                "git clone",
            )
        except _Fail as exc:
            raise _Fail(exc.reason if exc.reason == BUDGET_EXHAUSTED else NOT_A_REPOSITORY) from None
        try:
            head = self.git.run(("rev-parse", "--verify", "--quiet", "HEAD^{commit}"), self.tree, "git rev-parse")
        except _Fail as exc:
            raise _Fail(exc.reason if exc.reason == BUDGET_EXHAUSTED else NO_HEAD) from None
        base = head.decode("ascii", "replace").strip()
        self.git.run(("checkout", "--quiet", "--detach", base), self.tree, "git checkout")
        return base

    def apply(self, index: int, fix: ScreenedDiff) -> str:
        """Apply one screened fix on top of the previous ones; returns the post-fix text."""
        problem = _target_problem(self.tree, fix)
        if problem:
            raise _Fail(problem)
        original = "" if fix.creation else (self.tree / fix.path).read_bytes().decode("utf-8")
        patch = str(_write_patch(self.patches, index, fix.diff))
        self.git.run(("apply", "--check", patch), self.tree, "git apply --check")
        try:
            self.git.run(("apply", patch), self.tree, "git apply")
            status = self.git.run(
                ("status", "--porcelain=v1", "-z", "--untracked-files=all"), self.tree, "git status"
            )
            changed = _changed_paths(status)
            if changed != [fix.path]:
                raise _Fail(
                    "post-check failed: the fix changed nothing"
                    if not changed
                    else f"post-check failed: the fix changed paths other than {fix.path}"
                )
            text = _result_text(self.tree, fix.path)
            _check_placement(original, text, fix)
            self.git.run(("add", "--", fix.path), self.tree, "git add")
            self.git.run(
                (*IDENTITY, "commit", "--quiet", "--no-verify", "-m", f"triage-harness fix {index}"),
                self.tree,
                "git commit",
            )
        except _Fail:
            try:
                self.reset()
            except _Fail as failed:
                self.broken = failed.reason
            raise
        return text

    def reset(self) -> None:
        """Back to the state after the previous applied fix."""
        self.git.run(("reset", "--quiet", "--hard"), self.tree, "git reset")
        self.git.run(("clean", "--quiet", "-f", "-d", "-x"), self.tree, "git clean")


def _screen_all(fixes: Sequence[CodeFix]) -> list[ScreenedDiff | str]:
    screened: list[ScreenedDiff | str] = []
    for fix in fixes:
        try:
            screened.append(screen(fix.path, fix.diff))
        except DiffRejected as exc:
            screened.append(str(exc))
    return screened


def _rejected_all(fixes: Sequence[CodeFix], screened: list[ScreenedDiff | str], reason: str) -> SandboxReport:
    outcomes = tuple(
        FixOutcome(i, fix.path, "rejected", item if isinstance(item, str) else reason)
        for i, (fix, item) in enumerate(zip(fixes, screened, strict=True), start=1)
    )
    return SandboxReport(None, outcomes)


def run_fixes(
    fixes: Sequence[CodeFix],
    watcher: Path | None,
    git: str | None,
    *,
    limits: Limits = Limits(),
    clock: Callable[[], float] = time.monotonic,
) -> SandboxReport:
    """Gate every fix, then apply the survivors in order, cumulatively, in a clone of the watcher's HEAD."""
    screened = _screen_all(fixes)
    if not any(isinstance(item, ScreenedDiff) for item in screened):
        return _rejected_all(fixes, screened, "")
    if watcher is None:
        return _rejected_all(fixes, screened, NOT_CONFIGURED)
    if not watcher.is_dir():
        return _rejected_all(fixes, screened, NOT_A_REPOSITORY)
    if git is None:
        return _rejected_all(fixes, screened, NO_GIT)
    root = Path(tempfile.mkdtemp(prefix="triage-sandbox-"))
    try:
        runner = _Git(git, root, limits, clock)
        try:
            runner.run(("version",), root, "git version")
        except _Fail as exc:
            return _rejected_all(fixes, screened, exc.reason if exc.reason == BUDGET_EXHAUSTED else NO_GIT)
        sandbox = _Sandbox(runner, root)
        try:
            base = sandbox.clone(watcher.absolute())
        except _Fail as exc:
            return _rejected_all(fixes, screened, exc.reason)
        return _apply_all(sandbox, fixes, screened, base)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _apply_all(
    sandbox: _Sandbox, fixes: Sequence[CodeFix], screened: list[ScreenedDiff | str], base: str
) -> SandboxReport:
    outcomes: list[FixOutcome] = []
    files: dict[str, str] = {}
    for index, (fix, item) in enumerate(zip(fixes, screened, strict=True), start=1):
        if isinstance(item, str):
            outcomes.append(FixOutcome(index, fix.path, "rejected", item))
            continue
        if sandbox.broken or sandbox.git.remaining() <= 0:
            outcomes.append(FixOutcome(index, fix.path, "rejected", sandbox.broken or BUDGET_EXHAUSTED))
            continue
        try:
            files[fix.path] = sandbox.apply(index, item)
        except _Fail as exc:
            outcomes.append(FixOutcome(index, fix.path, "rejected", exc.reason))
            continue
        outcomes.append(FixOutcome(index, fix.path, "applied", "", item.added, item.removed))
    return SandboxReport(base, tuple(outcomes), files)
