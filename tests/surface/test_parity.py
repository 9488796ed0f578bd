"""Parity of the two front doors (docs/surface.md "Parity"): same tools, same flags, same bytes."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import click
import pytest
from mcp import Client
from pgsupport import PgServer, pg_server  # noqa: F401  (the shared session fixture)
from runners import run_cli
from store_backends import PgStores, StoreBackend
from surface_corpus import PACKAGE_CORPUS, prepare_workspace
from testops import REGISTRY as TEST_REGISTRY

from harness.cli import OPERATOR_COMMANDS, HarnessGroup, main_group
from harness.cliargs import flags_for
from harness.config import Overrides, load_settings
from harness.context import build_context
from harness.mcp_server import build_server, tool_list
from harness.surface import OPERATIONS, Registry

SNAPSHOT = Path(__file__).parent / "snapshots" / "tools_list.json"

TEST_CORPUS: list[tuple[str, dict[str, Any]]] = [
    ("test_echo", {"required_name": "n", "text": "hi", "count": 2, "loud": True, "tags": ["a"], "meta": {"k": "v"}}),
    ("test_echo", {"required_name": "n"}),
    ("test_echo", {"required_name": "n", "count": 11}),
    ("test_echo", {"required_name": "n", "eventType": "x"}),
    ("test_echo", {}),
    ("test_fail", {"code": "invalid_input"}),
    ("test_fail", {"code": "not_found"}),
    ("test_fail", {"code": "refused"}),
    ("test_fail", {"code": "upstream_unavailable"}),
    ("test_fail", {"code": "internal_error"}),
    ("no_such_operation", {}),
    ("test_big", {"size": 5000}),
]


def _cli_commands(registry: Registry) -> set[str]:
    ctx = click.Context(main_group, obj=None)
    from harness.cli import App

    ctx.obj = App(overrides=Overrides(), conversation=None, pretty=False, registry=registry)
    group: HarnessGroup = main_group  # type: ignore[assignment]
    return set(group.list_commands(ctx)) - set(OPERATOR_COMMANDS)


@pytest.mark.parametrize("registry", [OPERATIONS, TEST_REGISTRY], ids=["package", "test"])
def test_tool_names_equal_cli_subcommands_equal_registry(registry: Registry) -> None:
    names = {tool.name for tool in tool_list(registry)}
    assert names == _cli_commands(registry) == set(registry.names())


@pytest.mark.parametrize("registry", [OPERATIONS, TEST_REGISTRY], ids=["package", "test"])
def test_input_schema_properties_equal_cli_flags(registry: Registry) -> None:
    for tool in tool_list(registry):
        op = registry.get(tool.name)
        flags = flags_for(op.impl.input_model)
        assert set(tool.input_schema["properties"]) == {f.field for f in flags}, tool.name
        assert set(tool.input_schema.get("required", [])) == {f.field for f in flags if f.required}, tool.name


def _cli_args(name: str, arguments: dict[str, Any]) -> list[str]:
    # The whole object through --input: the same JSON value the MCP client sends.
    return [name, "--input", json.dumps(arguments)]


async def _mcp_texts(registry: Registry, context: Any, corpus: list[tuple[str, dict[str, Any]]], mode: str) -> list[Any]:
    out = []
    async with Client(build_server(registry, context), mode=mode) as client:
        for name, arguments in corpus:
            out.append(await client.call_tool(name, arguments))
    return out


def _check(cli_results: list[Any], mcp_results: list[Any], corpus: list[tuple[str, dict[str, Any]]]) -> None:
    for (name, _), cli, mcp in zip(corpus, cli_results, mcp_results, strict=True):
        (content,) = mcp.content
        assert cli.stdout == content.text + "\n", name
        document = json.loads(content.text)
        if mcp.is_error:
            assert mcp.structured_content is None
            assert cli.exit_code != 0
            assert set(document) == {"error"}
        else:
            assert mcp.structured_content == document
            assert cli.exit_code == 0


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["2026-07-28", "legacy"])
async def test_cli_stdout_equals_mcp_text_for_the_test_corpus(workspace: Path, mode: str) -> None:
    context = build_context(load_settings(Overrides(workspace=workspace)))
    mcp_results = await _mcp_texts(TEST_REGISTRY, context, TEST_CORPUS, mode)
    cli_results = [run_cli(["--workspace", str(workspace), *_cli_args(n, a)], TEST_REGISTRY) for n, a in TEST_CORPUS]
    _check(cli_results, mcp_results, TEST_CORPUS)
    codes = {json.loads(r.stdout).get("error", {}).get("code") for r in cli_results}
    assert codes >= {"invalid_input", "not_found", "refused", "upstream_unavailable", "internal_error", "unknown_operation"}


@pytest.mark.anyio
async def test_cli_stdout_equals_mcp_text_for_the_package_corpus(tmp_path: Path, store_backend: StoreBackend) -> None:
    workspace = prepare_workspace(tmp_path, store_backend)
    context = build_context(load_settings(Overrides(workspace=workspace)))
    mcp_results = await _mcp_texts(OPERATIONS, context, PACKAGE_CORPUS, "2026-07-28")
    cli_results = [run_cli(["--workspace", str(workspace), *_cli_args(n, a)]) for n, a in PACKAGE_CORPUS]
    _check(cli_results, mcp_results, PACKAGE_CORPUS)


def test_the_package_corpus_answers_identically_on_both_store_backends(
    tmp_path: Path, pg_server: PgServer  # noqa: F811
) -> None:
    """The same sample data and baseline, one workspace on the git store and one on PostgreSQL: every answer of
    the package corpus is byte-identical (issue 12)."""
    stores = PgStores(pg_server)
    pg = StoreBackend("postgres", stores)
    try:
        git_ws = prepare_workspace(tmp_path / "git", StoreBackend("git", None))
        pg_ws = prepare_workspace(tmp_path / "pg", pg)
        for name, arguments in PACKAGE_CORPUS:
            on_git = run_cli(["--workspace", str(git_ws), *_cli_args(name, arguments)])
            on_pg = run_cli(["--workspace", str(pg_ws), *_cli_args(name, arguments)])
            assert (on_pg.exit_code, on_pg.stdout) == (on_git.exit_code, on_git.stdout), name
    finally:
        stores.drop_all()


def _snapshot() -> list[dict[str, Any]]:
    return [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in tool_list(OPERATIONS)]


def test_tools_list_matches_the_committed_snapshot() -> None:
    current = json.dumps(_snapshot(), indent=2, sort_keys=True) + "\n"
    if os.environ.get("HARNESS_UPDATE_SNAPSHOT") == "1":
        SNAPSHOT.parent.mkdir(exist_ok=True)
        SNAPSHOT.write_text(current)
    assert SNAPSHOT.read_text() == current, (
        "tools/list changed; if on purpose, rerun with HARNESS_UPDATE_SNAPSHOT=1 and commit the snapshot"
    )
