"""The generator of the README's checked examples, run by cog (a maintainer tool, not part of the package).

Each checked example in README.md is a cog block calling `console("<harness arguments>")`: the command runs
in-process in a fresh sample workspace (`harness --workspace .harness init` in a temporary directory, made once
per cog run, as a new user would have it) and the block becomes the command with exactly what it printed, and
its exit status when that is not 0. `cog -r README.md` rewrites the blocks in place; `cog --check README.md`
(tests/test_readme.py) fails when one no longer matches what the harness prints.
"""

from __future__ import annotations

import os
import shlex
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import cog

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests")]

from runners import CliResult, run_cli  # noqa: E402

_SAMPLE: tempfile.TemporaryDirectory[str] | None = None


@contextmanager
def _in_sample_workspace() -> Iterator[None]:
    """Inside the sample workspace's directory, with no HARNESS_* variable of the maintainer's shell."""
    global _SAMPLE
    saved_env = {name: value for name, value in os.environ.items() if name.startswith("HARNESS_")}
    saved_cwd = os.getcwd()
    for name in saved_env:
        del os.environ[name]
    try:
        if _SAMPLE is None:
            _SAMPLE = tempfile.TemporaryDirectory(prefix="readme-cog-")
            os.chdir(_SAMPLE.name)
            created = run_cli(["--workspace", ".harness", "init"])
            if created.exit_code != 0:
                raise RuntimeError(f"harness init failed: {created.stdout}{created.stderr}")
        os.chdir(_SAMPLE.name)
        yield
    finally:
        os.chdir(saved_cwd)
        os.environ.update(saved_env)


def run(arguments: str) -> CliResult:
    """`harness ARGUMENTS` (shell words) in the sample workspace."""
    with _in_sample_workspace():
        return run_cli(shlex.split(arguments))


def console(arguments: str) -> None:
    """Write the console block of `harness ARGUMENTS`: the command, its output, and `echo $?` unless it is 0."""
    result = run(arguments)
    cog.out(f"```console\n$ harness {arguments}\n{result.stdout}")
    if result.exit_code != 0:
        cog.out(f"$ echo $?\n{result.exit_code}\n")
    cog.out("```\n")
