"""Subprocess helpers for end-to-end tests: the real `harness` command, optionally over a test registry."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

TESTS_DIR = Path(__file__).resolve().parent.parent

# Runs the real CLI entry point with the test-only registry (never part of the package).
TEST_REGISTRY_LAUNCHER = (
    "import sys; sys.path.insert(0, {tests!r}); from testops import REGISTRY; "
    "from harness.cli import main; main(sys.argv[1:], registry=REGISTRY)"
)


def harness_argv(*args: str, test_registry: bool = False) -> list[str]:
    """argv for `harness ARGS` in a subprocess (the installed entry point's code path)."""
    if test_registry:
        return [sys.executable, "-c", TEST_REGISTRY_LAUNCHER.format(tests=str(TESTS_DIR)), *args]
    return [sys.executable, "-c", "from harness.cli import main; main()", *args]


def clean_env(**extra: str) -> dict[str, str]:
    """The test process's environment without harness variables, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARNESS_") or k.startswith("HARNESS_TEST_")}
    env.update(extra)
    return env


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, proc: subprocess.Popen, timeout: float = 20.0, host: str = "127.0.0.1") -> None:
    """Block until something listens on host:port, or fail with the server's stderr."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited early: {proc.stderr.read() if proc.stderr else ''}")
        try:
            with socket.create_connection((host, port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"nothing listened on port {port}")
