"""The two front doors for tests: one operation call through the in-process CLI or through the SDK's in-memory
MCP client (with a context built as `harness serve` builds it), answered in one shape.

`door` (tests/conftest.py) runs a test once per door; `call_both` calls through both and asserts they gave the
same bytes. How the CLI receives the arguments is the `encode` argument: `as_input` (one `--input` JSON document,
which carries anything MCP can), `as_flags` (flags as an operator types them) or `as_files(...)` (objects in files).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from runners import run_cli

from harness.config import Overrides, load_settings
from harness.context import Context, build_context
from harness.errors import EXIT_CODES
from harness.mcp_server import build_server
from harness.surface import OPERATIONS


@dataclass
class Answer:
    """One call's answer as a front door gave it. On MCP, `exit_code` is the status the CLI exits with for the
    same answer (0, or the error code's), so answers of both doors compare."""

    document: Any
    text: str
    is_error: bool
    exit_code: int
    stderr: str = ""

    @property
    def error(self) -> dict[str, Any]:
        """The error object of an error answer (empty otherwise)."""
        return dict(self.document.get("error", {})) if isinstance(self.document, dict) else {}


Encode = Callable[[dict[str, Any], Path], list[str]]
Door = Callable[..., Answer]


def as_input(arguments: dict[str, Any], scratch: Path) -> list[str]:
    """All arguments as one `--input` JSON document."""
    return ["--input", json.dumps(arguments)]


def as_flags(arguments: dict[str, Any], scratch: Path) -> list[str]:
    """String and object arguments as flags (objects inline as JSON); `--input` when an argument has no flag form
    (a key that is not lower case, a value of another type)."""
    args: list[str] = []
    for key, value in arguments.items():
        if key != key.lower() or not isinstance(value, str | dict):
            return as_input(arguments, scratch)
        args += [f"--{key.replace('_', '-')}", value if isinstance(value, str) else json.dumps(value)]
    return args


def as_files(*verbatim: str, indent: int = 1) -> Encode:
    """Every argument as a flag; an object is written to `<scratch>/<key>.json` (JSON with `indent`) and its flag
    names the file, and so is a string given for one of the `verbatim` keys (written as it is)."""

    def encode(arguments: dict[str, Any], scratch: Path) -> list[str]:
        args: list[str] = []
        for key, value in arguments.items():
            flag = "--" + key.replace("_", "-")
            if isinstance(value, dict) or (key in verbatim and isinstance(value, str)):
                path = scratch / f"{key}.json"
                path.write_text(value if isinstance(value, str) else json.dumps(value, indent=indent))
                args += [flag, str(path)]
            else:
                args += [flag, str(value)]
        return args

    return encode


def call_cli(
    workspace: Path,
    operation: str,
    arguments: dict[str, Any],
    *,
    encode: Encode = as_input,
    baseline: Path | None = None,
    rules: Path | None = None,
) -> Answer:
    """`harness --workspace W [--baseline F] [--rules R] OPERATION ARGS...` in-process; files go in the workspace."""
    globals_ = ["--workspace", str(workspace)]
    if baseline is not None:
        globals_ += ["--baseline", str(baseline)]
    if rules is not None:
        globals_ += ["--rules", str(rules)]
    result = run_cli([*globals_, operation, *encode(arguments, workspace)])
    assert result.stdout.endswith("\n") and result.stdout.count("\n") == 1, result.stdout
    return Answer(result.json(), result.stdout[:-1], result.exit_code != 0, result.exit_code, result.stderr)


async def _session(context: Context, calls: list[tuple[str, Any]]) -> list[tuple[str, bool]]:
    out = []
    async with Client(build_server(OPERATIONS, context)) as client:
        for operation, arguments in calls:
            answer = await client.call_tool(operation, arguments)
            (content,) = answer.content
            if answer.is_error:
                assert answer.structured_content is None
            else:
                assert answer.structured_content == json.loads(content.text)
            out.append((content.text, answer.is_error))
    return out


def mcp_calls(
    workspace: Path,
    calls: list[tuple[str, Any]],
    *,
    baseline: Path | None = None,
    rules: Path | None = None,
    prepare: Callable[[Context], None] | None = None,
) -> list[tuple[str, bool]]:
    """Each (operation, arguments) call over one in-memory MCP session, with a context built as `harness serve`
    builds it (`prepare` may register services on it first): each answer's text and whether it is an error.
    A success's structured content must be its text parsed; an error has none."""
    context = build_context(load_settings(Overrides(workspace=workspace, baseline=baseline, rules=rules)))
    try:
        if prepare is not None:
            prepare(context)
        return anyio.run(_session, context, calls)
    finally:
        context.close()


def call_mcp(workspace: Path, operation: str, arguments: Any, *, encode: Encode | None = None, **options: Any) -> Answer:
    """One tools/call over the in-memory MCP client (`options` as for `mcp_calls`); `encode` is the CLI's alone,
    accepted so that one call reads the same for both doors."""
    ((text, is_error),) = mcp_calls(workspace, [(operation, arguments)], **options)
    document = json.loads(text)
    return Answer(document, text, is_error, EXIT_CODES[document["error"]["code"]] if is_error else 0)


def call_both(workspace: Path, operation: str, arguments: dict[str, Any], **options: Any) -> Answer:
    """The call through the CLI and through MCP; both must give the same bytes. Returns the CLI's answer."""
    cli = call_cli(workspace, operation, arguments, **options)
    mcp = call_mcp(workspace, operation, arguments, **options)
    assert mcp.text == cli.text, f"CLI and MCP differ for {operation}"
    assert (mcp.is_error, mcp.exit_code) == (cli.is_error, cli.exit_code)
    return cli


DOORS: dict[str, Door] = {"cli": call_cli, "mcp": call_mcp}
