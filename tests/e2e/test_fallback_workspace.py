"""The fallback workspace (no --workspace, no harness.toml above the package, no HARNESS_ROOT) without a store:
every operation's notes say which workspace answered and that it holds no store, and `harness serve` warns.

The real CLI runs from a copy of the package in a temporary directory, so the walk up from the package's
location finds no harness.toml whatever checkout the suite runs in (a `make run` leaves `.harness/` in it)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import trustme
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from procs import clean_env

import harness
from harness.investigate.check_baseline import NOTE_NO_BASELINE
from harness.investigate.get_raw_event import not_found_note
from tests.investigate.github_support import json_reply
from tests.net.https_server import HttpsServer


def fallback_note(workspace: Path) -> str:
    return (
        f"workspace {json.dumps(str(workspace))} holds no store: it is the fallback workspace, used because no "
        "--workspace was given, no harness.toml was found above the installed package and HARNESS_ROOT is unset, "
        "so every read is empty; run harness init to create a store there, or point at your workspace with "
        "--workspace DIR (or HARNESS_ROOT)"
    )


def _fallback_env(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """An environment whose `harness` is a copy of the package under tmp_path, and its fallback workspace."""
    site = tmp_path / "site"
    shutil.copytree(Path(harness.__file__).parent, site / "harness", ignore=shutil.ignore_patterns("__pycache__"))
    env = clean_env(XDG_DATA_HOME=str(tmp_path / "xdg"), PYTHONPATH=str(site))
    where = subprocess.run([sys.executable, "-c", "import harness; print(harness.__file__)"], env=env,
                           capture_output=True, text=True, check=True)
    assert where.stdout.strip() == str(site / "harness" / "__init__.py")
    return env, tmp_path / "xdg" / "triage-harness"


def _harness(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-c", "from harness.cli import main; main()", *args]
    return subprocess.run(argv, cwd="/", env=env, capture_output=True, text=True, timeout=60)


@pytest.fixture
def fake_github(tmp_path: Path) -> HttpsServer:
    with HttpsServer(trustme.CA()) as server:
        server.script("/users/octocat", json_reply({"login": "octocat", "type": "User"}))
        server.script("/users/octocat/events/public", json_reply([]))
        yield server


def test_every_operation_notes_the_empty_fallback_workspace_until_init(
    tmp_path: Path, fake_github: HttpsServer
) -> None:
    env, workspace = _fallback_env(tmp_path)
    # The fallback workspace may hold a harness.toml (found there, not by the walk); this one points at the fake
    # GitHub so that github_actor answers too. It holds no store.
    workspace.mkdir(parents=True)
    shutil.copy(fake_github.ca_file, workspace / "ca.pem")
    (workspace / "harness.toml").write_text(f'[github]\napi_url = "{fake_github.origin}"\nca_file = "ca.pem"\n')
    note = fallback_note(workspace)
    calls = [
        (["search_events", "--actor", "alice"], "no events matched the filter " + note),
        (["search_findings", "--actor", "alice"], "no findings matched the filter " + note),
        (["check_baseline", "--entity", "alice"], f"{NOTE_NO_BASELINE} {note}"),
        (["lookup_rules", "--finding-id", "f", "--finding-family", "unusual-timing", "--maintenance-window", "true"],
         note),
        (["get_raw_event", "--id", "evt-1"], f"{not_found_note('evt-1')}; {note}"),
        (["github_actor", "--login", "octocat"], note),
    ]
    for args, notes in calls:
        result = _harness(env, *args)
        assert result.returncode == 0, (args, result.stdout, result.stderr)
        assert json.loads(result.stdout)["notes"] == notes, args

    assert _harness(env, "init", "--empty").returncode == 0
    after = json.loads(_harness(env, "search_events", "--actor", "alice").stdout)
    assert after["notes"] == "no events matched the filter"


def test_a_chosen_workspace_without_a_store_has_no_fallback_note(tmp_path: Path) -> None:
    env, _ = _fallback_env(tmp_path)
    chosen = tmp_path / "chosen"
    result = _harness(env, "--workspace", str(chosen), "search_events", "--actor", "alice")
    assert json.loads(result.stdout)["notes"] == "no events matched the filter"
    rooted = _harness({**env, "HARNESS_ROOT": str(chosen)}, "search_events", "--actor", "alice")
    assert json.loads(rooted.stdout)["notes"] == "no events matched the filter"


@pytest.mark.anyio
async def test_serve_warns_on_stderr_and_its_tools_note_the_fallback(tmp_path: Path) -> None:
    env, workspace = _fallback_env(tmp_path)
    params = StdioServerParameters(command=sys.executable, args=["-c", "from harness.cli import main; main()", "serve"],
                                   env=env, cwd="/")
    errlog = tmp_path / "stderr.txt"
    with errlog.open("w") as sink:
        async with stdio_client(params, errlog=sink) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            result = await session.call_tool("search_events", {"actor": "alice"})
    (content,) = result.content
    assert json.loads(content.text)["notes"] == "no events matched the filter " + fallback_note(workspace)
    assert f"warning: {fallback_note(workspace)}\n" in errlog.read_text()
