"""The locked-down git runner (docs/investigate.md §3.2): fixed config, an environment built from scratch, bytes only."""

from __future__ import annotations

import atexit
import functools
import os
import re
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path

from harness.errors import UpstreamUnavailable
from harness.store.refcache import HeadCache, probe
from harness.text.sanitize import sanitize_field

ZERO_OID = "0" * 40
IDENTITY_NAME = "harness-store"
IDENTITY_EMAIL = "store@harness.invalid"
_MIN_VERSION = (2, 25)
_LOCKDOWN = ("-c", "core.hooksPath=/dev/null", "-c", "gc.auto=0", "-c", "maintenance.auto=false")
# Concurrent writers briefly hold the branch lock; waiting for it keeps a lost race from looking like a failure.
_REF_LOCK_WAIT = ("-c", "core.filesRefLockTimeout=5000")
_VERSION_RE = re.compile(rb"git version (\d+)\.(\d+)")


def unavailable(reason: str) -> UpstreamUnavailable:
    """The error of docs/investigate.md §3.2: `store unavailable: <reason>`."""
    return UpstreamUnavailable(f"store unavailable: {reason}")


@functools.cache
def git_executable() -> str:
    """Absolute path of `git`, resolved once and checked to be at least 2.25."""
    found = shutil.which("git")
    if found is None:
        raise unavailable("git executable not found")
    path = os.path.abspath(found)
    out = subprocess.run(
        [path, "version"], env=_base_env(), cwd=_private_home(), capture_output=True, check=False
    ).stdout
    match = _VERSION_RE.match(out)
    if match is None or (int(match[1]), int(match[2])) < _MIN_VERSION:
        raise unavailable(f"git 2.25 or newer is required, found {sanitize_field(out.decode('utf-8', 'replace'))}")
    return path


@functools.cache
def _private_home() -> str:
    # mkdtemp creates the directory with mode 0700, so no other user can plant a config in it.
    home = tempfile.mkdtemp(prefix="harness-git-home-")
    atexit.register(shutil.rmtree, home, ignore_errors=True)
    return home


def _base_env() -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", os.defpath),
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CONFIG_SYSTEM": "/dev/null",
        "GIT_CONFIG_NOSYSTEM": "1",
        "HOME": _private_home(),
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_NO_REPLACE_OBJECTS": "1",
        "LC_ALL": "C",
        "LANG": "C",
        "TZ": "UTC",
        "GIT_AUTHOR_NAME": IDENTITY_NAME,
        "GIT_AUTHOR_EMAIL": IDENTITY_EMAIL,
        "GIT_COMMITTER_NAME": IDENTITY_NAME,
        "GIT_COMMITTER_EMAIL": IDENTITY_EMAIL,
    }


def _reason(stderr: bytes) -> str:
    text = stderr.decode("utf-8", "replace").strip()
    if "not a git repository" in text:
        return "not a git repository"
    first = text.splitlines()[0] if text else "git failed without a message"
    return sanitize_field(first)


def find_git_dir(path: Path) -> Path | None:
    """The git dir of the store at `path`, or None when the store does not exist yet (missing or empty)."""
    if not path.exists() or (path.is_dir() and not any(path.iterdir())):
        return None
    dotgit = path / ".git"
    if dotgit.is_file():
        text = dotgit.read_text("utf-8", "replace").strip()
        if not text.startswith("gitdir:"):
            raise unavailable("not a git repository")
        target = Path(text[len("gitdir:") :].strip())
        git_dir = target if target.is_absolute() else path / target
    else:
        git_dir = dotgit if dotgit.is_dir() else path
    if not (git_dir / "HEAD").is_file() or not (git_dir / "objects").is_dir():
        raise unavailable("not a git repository")
    return git_dir.resolve()


def init_bare(path: Path) -> Path:
    """Create an empty bare repository with HEAD symbolic to refs/heads/main, as `harness init` does.

    Built beside the target and renamed into place, so a concurrent reader never sees half a repository.
    """
    path = path.absolute()
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = path.parent / f".{path.name}.init-{uuid.uuid4().hex}"
    try:
        # An empty template keeps the sample hooks (and anything a system template adds) out of the store.
        run_git(None, ("init", "--bare", "-q", "--template=", str(staging)))
        run_git(staging, ("symbolic-ref", "HEAD", "refs/heads/main"))
        try:
            os.rename(staging, path)
        except OSError:
            if find_git_dir(path) is None:
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    found = find_git_dir(path)
    if found is None:
        raise unavailable("not a git repository")
    return found


def run_git(
    git_dir: Path | None,
    args: Sequence[str],
    *,
    stdin: bytes | None = None,
    extra_env: Mapping[str, str] | None = None,
    config: Sequence[str] = (),
) -> subprocess.CompletedProcess[bytes]:
    """Run git once with the locked-down config and environment; never raises on a non-zero exit."""
    env = _base_env()
    if git_dir is not None:
        env["GIT_DIR"] = str(git_dir)
    if extra_env:
        env.update(extra_env)
    try:
        return subprocess.run(
            [git_executable(), *_LOCKDOWN, *config, *args],
            input=stdin,
            env=env,
            cwd=_private_home(),
            capture_output=True,
            check=False,
        )
    except OSError as exc:
        raise unavailable(f"cannot run git: {exc.strerror or exc}") from exc


class Git:
    """Plumbing over one store's git dir; every failure is `upstream_unavailable`."""

    def __init__(self, git_dir: Path) -> None:
        self.git_dir = git_dir
        self._head_cache = HeadCache(git_dir)
        self.head_resolutions = 0

    def run(self, *args: str, stdin: bytes | None = None, extra_env: Mapping[str, str] | None = None) -> bytes:
        """Stdout of a git command that must succeed."""
        done = run_git(self.git_dir, args, stdin=stdin, extra_env=extra_env)
        if done.returncode != 0:
            raise unavailable(_reason(done.stderr))
        return done.stdout

    def branch(self) -> str:
        """The ref HEAD points to; a detached HEAD is refused."""
        done = run_git(self.git_dir, ("symbolic-ref", "-q", "HEAD"))
        if done.returncode == 1 and not done.stderr.strip():
            raise unavailable("HEAD is detached")
        if done.returncode != 0:
            raise unavailable(_reason(done.stderr))
        return done.stdout.decode("utf-8", "replace").strip()

    def ref_commit(self, ref: str) -> str | None:
        """The commit a ref points to, or None when it does not exist yet."""
        done = run_git(self.git_dir, ("rev-parse", "-q", "--verify", f"{ref}^{{commit}}"))
        if done.returncode != 0:
            if done.stderr.strip():
                raise unavailable(_reason(done.stderr))
            return None
        return done.stdout.decode("ascii").strip()

    def head(self) -> tuple[str, str | None]:
        """(branch, commit) of HEAD; the commit is None for a repository without commits.

        Served from the ref-identity cache (harness.store.refcache) while HEAD's files are unchanged; git is
        asked only when they changed.
        """
        cached = self._head_cache.get()
        if cached is not None:
            return cached
        before = probe(self.git_dir)
        answer = self._resolve_head()
        self._head_cache.put(before, answer)
        return answer

    def _resolve_head(self) -> tuple[str, str | None]:
        self.head_resolutions += 1
        # One process in the common case (HEAD on a branch with commits), since every call resolves HEAD;
        # anything else takes the two-step path that tells unborn, detached and broken apart.
        done = run_git(self.git_dir, ("rev-parse", "HEAD^{commit}", "--symbolic-full-name", "HEAD"))
        lines = done.stdout.decode("ascii", "replace").split()
        if done.returncode == 0 and len(lines) == 2 and lines[1] != "HEAD":
            return lines[1], lines[0]
        branch = self.branch()
        return branch, self.ref_commit(branch)

    def head_commit(self) -> str:
        """HEAD's commit, or "" when the repository has none."""
        return self.head()[1] or ""

    def compare_and_swap(self, branch: str, new: str, old: str | None) -> str | None:
        """Move `branch` from `old` (None: must not exist) to `new`; None on success, else git's reason."""
        done = run_git(self.git_dir, ("update-ref", branch, new, old or ZERO_OID), config=_REF_LOCK_WAIT)
        return None if done.returncode == 0 else _reason(done.stderr)

    def last_change(self, commit: str, path: str) -> str:
        """The newest commit reachable from `commit` that changed `path`, or ""."""
        if not commit:
            return ""
        return self.run("rev-list", "-1", commit, "--", path).decode("ascii").strip()

    def blobs(self) -> BlobReader:
        """A `cat-file --batch` reader for many blobs through one process."""
        return BlobReader(self.git_dir)


class BlobReader:
    """Reads committed blobs through one `git cat-file --batch` process; use as a context manager."""

    def __init__(self, git_dir: Path) -> None:
        env = _base_env()
        env["GIT_DIR"] = str(git_dir)
        try:
            self._proc = subprocess.Popen(
                [git_executable(), *_LOCKDOWN, "cat-file", "--batch"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=env,
                cwd=_private_home(),
            )
        except OSError as exc:
            raise unavailable(f"cannot run git: {exc.strerror or exc}") from exc

    def read(self, oid: str) -> bytes:
        """The content of blob `oid`."""
        assert self._proc.stdin is not None and self._proc.stdout is not None
        try:
            self._proc.stdin.write(oid.encode("ascii") + b"\n")
            self._proc.stdin.flush()
            header = self._proc.stdout.readline().split()
        except OSError as exc:
            raise unavailable(f"git cat-file failed: {exc.strerror or exc}") from exc
        if len(header) != 3 or header[1] != b"blob":
            raise unavailable(f"cannot read blob {oid}")
        size = int(header[2])
        data = self._proc.stdout.read(size)
        self._proc.stdout.read(1)
        if len(data) != size:
            raise unavailable(f"short read of blob {oid}")
        return data

    def close(self) -> None:
        """Stop the cat-file process."""
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        if self._proc.stdout is not None:
            self._proc.stdout.close()
        self._proc.wait()

    def __enter__(self) -> BlobReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
