"""The `--baseline FILE` choice (docs/investigate.md §6.3): the file, else the last stored record, else none; a bad
file fails every CLI call and keeps `harness serve` from starting; parsed files are reloaded when they change."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from doors import Answer, as_flags
from mcp import Client
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from runners import run_cli

from harness.config import Overrides, load_settings
from harness.context import build_context
from harness.mcp_server import build_server
from harness.surface import OPERATIONS
from tests.e2e.procs import clean_env as subprocess_env
from tests.e2e.procs import free_port, harness_argv
from tests.investigate.baseline_support import (  # noqa: F401 - fixtures
    BASELINE_B,
    clean_env_fixture,
    store_baseline,
    workspace_fixture,
    write_baseline_file,
)

NO_BASELINE = (
    "no baseline is available (no baseline record in the store and no --baseline file); every entity reads as unknown"
)
STORED = {"known_actors": ["stored-actor"]}
FILE = {"known_actors": ["file-actor"]}


def known(door: Callable[..., Answer], workspace: Path, entity: str, baseline: Path | None = None) -> bool:
    result = door(workspace, "check_baseline", {"entity": entity}, baseline=baseline, encode=as_flags)
    assert not result.is_error, result.text
    return bool(result.document["known"])


def test_the_file_wins_over_the_stored_record(workspace: Path, tmp_path: Path, door: Callable[..., Answer]) -> None:
    store_baseline(workspace, STORED)
    path = write_baseline_file(tmp_path / "b.json", FILE)
    assert known(door, workspace, "file-actor", path)
    assert not known(door, workspace, "stored-actor", path)
    assert known(door, workspace, "stored-actor")
    assert not known(door, workspace, "file-actor")


def test_a_file_needs_no_store(tmp_path: Path, door: Callable[..., Answer]) -> None:
    workspace = tmp_path / "nowhere"
    path = write_baseline_file(tmp_path / "b.json", FILE)
    assert known(door, workspace, "FILE-ACTOR", path)
    assert not (workspace / "store").exists()


def test_no_file_and_no_record_means_no_baseline_not_an_error(workspace: Path, door: Callable[..., Answer]) -> None:
    result = door(workspace, "check_baseline", {"entity": "anyone"}, encode=as_flags)
    assert (result.is_error, result.document["known"], result.document["notes"]) == (False, False, NO_BASELINE)


def test_file_field_names_are_normalized_and_nulls_are_empty(tmp_path: Path, door: Callable[..., Answer]) -> None:
    path = tmp_path / "b.json"
    path.write_text(
        json.dumps(
            {
                "KnownUsers": {
                    "Baron": {"KnownGeos": ["US"], "last-seen": "2026-04-09T14:00:00+02:00", "knownIPs": None}
                },
                "frequencyTables": {"azure:login:Baron": 3},
                "actor_roles": None,
                "Relationships": {"Baron:x": {"Count": 2, "FirstSeen": "2026-01-01"}},
                "knownActors": None,
            }
        )
    )
    result = door(tmp_path, "check_baseline", {"entity": "baron", "source": "us"}, baseline=path, encode=as_flags)
    assert result.document == {
        "known": True,
        "last_seen": "2026-04-09T12:00:00Z",
        "frequency": 3,
        "frequency_by_type": {"login": 3},
        "frequency_for_type": 0,
        "event_type": "",
        "roles": [],
        "relationships": {"Baron:x": {"count": 2, "first_seen": "2026-01-01", "last_seen": ""}},
        "notes": "",
    }


BAD_FILES: list[tuple[str, str]] = [
    (
        '{"known_actors": ["a"], "colour": "red"}',
        (
            'unknown field "colour" (allowed: schema_version, '
            "built_from_commit, known_users, known_actors, known_created_entities, frequency_tables, actor_hours, "
            "actor_roles, relationships)"
        ),
    ),
    ('{"known_actors": "a"}', 'field "known_actors": expected an array, got a string'),
    ('{"frequency_tables": {"a:b:c": -1}}', 'field "frequency_tables.a:b:c": must be a count of at least 0, got -1'),
    ('{"actor_hours": {"x": [24]}}', 'field "actor_hours.x[0]": must be an hour from 0 to 23, got 24'),
    (
        '{"known_actors": ["a\\u202eb"]}',
        ('field "known_actors[0]": contains control, format, tab or line-break characters'),
    ),
    (
        '{"known_users": {"a\\nb": {}}}',
        ('field "known_users key": contains control, format, tab or line-break characters'),
    ),
    ('{"schema_version": 2}', 'field "schema_version": must be 1'),
    ("[]", "a baseline must be a JSON object, got an array"),
    ('{"known_actors": [', "malformed JSON at line 1 column 19: Expecting value"),
]


@pytest.mark.parametrize(("content", "problem"), BAD_FILES, ids=[c for c, _ in BAD_FILES])
def test_a_bad_file_is_invalid_input_naming_the_file(
    workspace: Path, tmp_path: Path, door: Callable[..., Answer], content: str, problem: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    result = door(workspace, "check_baseline", {"entity": "x"}, baseline=path, encode=as_flags)
    assert result.document == {
        "error": {"code": "invalid_input", "message": f"baseline file {path}: {problem}", "operation": "check_baseline"}
    }


def test_a_missing_file_is_invalid_input(workspace: Path, tmp_path: Path, door: Callable[..., Answer]) -> None:
    path = tmp_path / "missing.json"
    result = door(workspace, "check_baseline", {"entity": "x"}, baseline=path, encode=as_flags)
    assert result.document["error"]["message"] == f'baseline: file "{path}" does not exist'


def _operation_calls() -> list[list[str]]:
    calls = [[op.name] for op in OPERATIONS]
    return [*calls, ["init", "--empty"], ["ingest", "events", "-"], ["baseline", "build"], ["no_such_operation"]]


@pytest.mark.parametrize("call", _operation_calls(), ids=lambda c: " ".join(c))
def test_a_bad_file_fails_every_cli_call(workspace: Path, tmp_path: Path, call: list[str]) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"known_actors": [1]}')
    result = run_cli(["--workspace", str(workspace), "--baseline", str(path), *call])
    assert result.exit_code == 2
    error = result.json()["error"]
    assert error["code"] == "invalid_input"
    assert error["message"] == f'baseline file {path}: field "known_actors[0]": expected a string, got an integer'
    assert not (workspace / "store").exists()
    assert not (workspace / "harness.toml").exists()


@pytest.mark.parametrize("transport", [[], ["--http", "127.0.0.1:{port}"]], ids=["stdio", "http"])
def test_serve_refuses_to_start_with_a_bad_file(workspace: Path, tmp_path: Path, transport: list[str]) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"actor_hours": {"x": [-1]}}')
    port = free_port()
    args = [arg.format(port=port) for arg in transport]
    argv = harness_argv("--workspace", str(workspace), "--baseline", str(path), "serve", *args)
    proc = subprocess.run(
        argv, capture_output=True, text=True, env=subprocess_env(), timeout=60, stdin=subprocess.DEVNULL, check=False
    )
    assert proc.returncode == 2
    assert json.loads(proc.stdout) == {
        "error": {
            "code": "invalid_input",
            "message": f'baseline file {path}: field "actor_hours.x[0]": must be an hour from 0 to 23, got -1',
            "operation": "serve",
        }
    }


@pytest.mark.anyio
async def test_serve_answers_from_the_file_over_stdio(workspace: Path, tmp_path: Path) -> None:
    store_baseline(workspace, STORED)
    path = write_baseline_file(tmp_path / "b.json", BASELINE_B)
    argv = harness_argv("--workspace", str(workspace), "--baseline", str(path), "serve")
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=subprocess_env())
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        result = await session.call_tool("check_baseline", {"entity": "ci-bot", "source": "us"})
    cli = run_cli(
        [
            "--workspace",
            str(workspace),
            "--baseline",
            str(path),
            "check_baseline",
            "--entity",
            "ci-bot",
            "--source",
            "us",
        ]
    )
    assert result.content[0].text + "\n" == cli.stdout
    assert json.loads(cli.stdout)["last_seen"] == "2026-04-10T00:00:00Z"


def _bump_mtime(path: Path, step_ns: int) -> None:
    info = path.stat()
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns + step_ns))


def test_one_server_rereads_the_file_when_it_changes(workspace: Path, tmp_path: Path) -> None:
    path = write_baseline_file(tmp_path / "b.json", {"known_actors": ["first"]})
    context = build_context(load_settings(Overrides(workspace=workspace, baseline=path)))

    async def calls() -> list[Any]:
        async with Client(build_server(OPERATIONS, context)) as client:
            out = [await client.call_tool("check_baseline", {"entity": "first"})]
            write_baseline_file(path, {"known_actors": ["second"]})
            _bump_mtime(path, 1_000_000_000)
            out.append(await client.call_tool("check_baseline", {"entity": "second"}))
            path.write_text('{"known_actors": null, "oops": 1}')
            _bump_mtime(path, 2_000_000_000)
            out.append(await client.call_tool("check_baseline", {"entity": "second"}))
            return out

    try:
        first, second, broken = anyio.run(calls)
    finally:
        context.close()
    assert json.loads(first.content[0].text)["known"] is True
    assert json.loads(second.content[0].text)["known"] is True
    assert broken.is_error
    assert json.loads(broken.content[0].text)["error"]["message"].startswith(f"baseline file {path}: unknown field")
