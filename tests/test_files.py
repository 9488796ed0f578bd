"""harness.files: the hardened read refuses what is not a regular file without blocking, and the private write
is atomic. The FIFO cases use real FIFOs; every CLI that reads a named file is run as a subprocess with a
timeout, so a read that blocked would fail the test instead of hanging it."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from harness import files
from tests.e2e.procs import clean_env, harness_argv

# Generous: the subprocess only has to start Python and refuse; a blocked open never returns at all.
CLI_TIMEOUT_S = 120


def _fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def test_a_regular_file_is_read_within_its_cap(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes(b"12345")
    assert files.read_regular(path, 5) == b"12345"
    with pytest.raises(files.FileTooLarge) as raised:
        files.read_regular(path, 4)
    assert str(raised.value) == f'file "{path}" is larger than 4 bytes'


def test_read_text_decodes_strict_utf8_and_names_the_first_bad_byte(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes("h\u00e9".encode())
    assert files.read_text(path, 10) == "h\u00e9"
    path.write_bytes(b"ok\n\xff")
    with pytest.raises(files.FileNotText) as raised:
        files.read_text(path, 10)
    assert (raised.value.start, str(raised.value)) == (3, f'file "{path}" is not valid UTF-8 (byte 3)')
    with pytest.raises(files.FileTooLarge):
        files.read_text(path, 2)


@pytest.mark.parametrize("follow_symlinks", [False, True], ids=["no-follow", "follow"])
def test_a_fifo_is_refused_as_not_a_regular_file(tmp_path: Path, follow_symlinks: bool) -> None:
    fifo = _fifo(tmp_path / "pipe")
    with pytest.raises(files.FileRefused) as raised:
        files.read_regular(fifo, 100, follow_symlinks=follow_symlinks)
    assert str(raised.value) == f'file "{fifo}" is not a regular file'


def test_a_symlink_is_refused_unless_followed(tmp_path: Path) -> None:
    target = tmp_path / "real"
    target.write_bytes(b"x")
    link = tmp_path / "link"
    link.symlink_to(target)
    with pytest.raises(files.FileRefused) as raised:
        files.read_regular(link, 10)
    assert str(raised.value) == f'file "{link}" is a symbolic link'
    assert files.read_regular(link, 10, follow_symlinks=True) == b"x"


def test_a_symlink_to_a_fifo_is_refused_when_followed(tmp_path: Path) -> None:
    link = tmp_path / "link"
    link.symlink_to(_fifo(tmp_path / "pipe"))
    with pytest.raises(files.FileRefused, match="is not a regular file$"):
        files.read_regular(link, 10, follow_symlinks=True)


def test_a_missing_file_is_file_missing(tmp_path: Path) -> None:
    with pytest.raises(files.FileMissing) as raised:
        files.read_regular(tmp_path / "absent", 10)
    assert str(raised.value) == f'file "{tmp_path / "absent"}" does not exist'


def test_a_fifo_swapped_in_after_the_lstat_is_refused_without_blocking(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race the identity check closes: lstat sees a regular file, then a FIFO takes its place before the
    open. The swap is made at exactly that moment by running it right after the real lstat returns."""
    path = tmp_path / "verdict.json"
    path.write_bytes(b"{}")
    real_stat = os.stat

    def stat_then_swap(target: object, *args: object, **kwargs: object) -> os.stat_result:
        result = real_stat(target, *args, **kwargs)  # type: ignore[arg-type]
        if os.fspath(target) == str(path) and stat.S_ISREG(result.st_mode):  # type: ignore[arg-type]
            path.unlink()
            os.mkfifo(path)
        return result

    monkeypatch.setattr(os, "stat", stat_then_swap)
    with pytest.raises(files.FileRefused) as raised:
        files.read_regular(path, 100)
    assert str(raised.value) == f'file "{path}" changed while it was opened'


def test_a_file_replaced_after_the_lstat_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "heads.json"
    path.write_bytes(b"old")
    other = tmp_path / "other"
    other.write_bytes(b"new")
    real_stat = os.stat
    swapped: list[bool] = []

    def stat_then_swap(target: object, *args: object, **kwargs: object) -> os.stat_result:
        result = real_stat(target, *args, **kwargs)  # type: ignore[arg-type]
        if os.fspath(target) == str(path) and not swapped:  # type: ignore[arg-type]
            swapped.append(True)
            os.replace(other, path)
        return result

    monkeypatch.setattr(os, "stat", stat_then_swap)
    with pytest.raises(files.FileRefused, match="changed while it was opened$"):
        files.read_regular(path, 100)


def test_write_private_is_0600_and_replaces_atomically(tmp_path: Path) -> None:
    path = tmp_path / "out.json"
    path.write_bytes(b"previous")
    size, digest = files.write_private(path, [b"ab", b"c"])
    assert (size, path.read_bytes()) == (3, b"abc")
    assert digest == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]


def test_write_private_without_overwrite_refuses_an_existing_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "key"
    path.write_bytes(b"kept")
    with pytest.raises(FileExistsError):
        files.write_private(path, [b"new"], overwrite=False)
    assert path.read_bytes() == b"kept"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["key"]


def test_write_private_removes_its_temporary_when_the_chunks_fail(tmp_path: Path) -> None:
    def chunks():
        yield b"half"
        raise RuntimeError("source failed")

    with pytest.raises(RuntimeError):
        files.write_private(tmp_path / "out", chunks())
    assert list(tmp_path.iterdir()) == []


def _run(workspace: Path, *args: str) -> subprocess.CompletedProcess[str]:
    argv = harness_argv("--workspace", str(workspace), *args)
    return subprocess.run(argv, capture_output=True, text=True, env=clean_env(), timeout=CLI_TIMEOUT_S, check=False)


def _message(done: subprocess.CompletedProcess[str]) -> str:
    """The error message: the JSON error document's on stdout, else stderr (operator commands)."""
    try:
        return str(json.loads(done.stdout)["error"]["message"])
    except (ValueError, KeyError, TypeError):
        return done.stderr


def _keys(workspace: Path) -> Path:
    key = workspace / "signing.key"
    done = _run(workspace, "ledger", "keygen", "--out", str(key))
    assert done.returncode == 0, done.stderr
    return key


@pytest.mark.parametrize(
    ("args", "exit_code"),
    [
        pytest.param(("search_events", "--finding-metadata", "{fifo}"), 2, id="object argument"),
        pytest.param(("fp_agent_verify", "--verdict", "{fifo}"), 2, id="verdict file"),
        # A corpus that cannot be loaded is upstream_unavailable (exit 3) by lookup_rules' contract.
        pytest.param(
            ("--rules", "{fifo}", "lookup_rules", "--finding-id", "f", "--finding-family", "x"), 3, id="rule corpus"
        ),
        pytest.param(("--baseline", "{fifo}", "check_baseline", "--entity", "x"), 2, id="baseline file"),
        pytest.param(("ledger", "verify", "--heads", "{fifo}"), 2, id="heads file"),
        pytest.param(("ledger", "verify", "--heads", "{heads}", "--pubkey", "{fifo}"), 2, id="public key"),
        pytest.param(("ledger", "head", "--sign", "{fifo}"), 2, id="signing key"),
    ],
)
def test_every_cli_file_argument_refuses_a_fifo_promptly(
    tmp_path: Path, args: tuple[str, ...], exit_code: int
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    fifo = _fifo(tmp_path / "pipe")
    heads = tmp_path / "heads.json"
    heads.write_text("{}")
    argv = [a.format(fifo=fifo, heads=heads) for a in args]
    done = _run(workspace, *argv)
    assert done.returncode == exit_code, (done.stdout, done.stderr)
    assert f'file "{fifo}" is not a regular file' in _message(done)


def test_a_fifo_harness_toml_is_refused_promptly(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    _fifo(workspace / "harness.toml")
    done = _run(workspace, "search_events")
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert f'file "{workspace / "harness.toml"}" is not a regular file' in _message(done)


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(("search_events", "--finding-metadata", "{bad}"), id="object argument"),
        pytest.param(("ledger", "verify", "--heads", "{bad}"), id="heads file"),
        pytest.param(("search_events",), id="harness.toml"),
    ],
)
def test_every_text_file_read_words_bad_utf8_the_same(tmp_path: Path, args: tuple[str, ...]) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    bad = workspace / "harness.toml" if args == ("search_events",) else tmp_path / "bad.json"
    bad.write_bytes(b"{}\n\xff")
    done = _run(workspace, *(a.format(bad=bad) for a in args))
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert f'file "{bad}" is not valid UTF-8 (byte 3)' in _message(done)


def test_keygen_writes_a_private_key_that_signing_accepts(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    key = _keys(workspace)
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert stat.S_IMODE(key.with_name("signing.key.pub").stat().st_mode) == 0o644
    done = _run(workspace, "ledger", "head", "--sign", str(key))
    assert done.returncode == 0, done.stderr
