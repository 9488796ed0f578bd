"""Workspace resolution and settings (docs/architecture.md "Configuration and paths")."""

from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path

import pytest

from harness.config import SCHEMA, ConfigError, Overrides, default_config_text, find_workspace, load_settings


def test_walk_up_from_the_package_finds_harness_toml(tmp_path: Path) -> None:
    root = tmp_path / "checkout"
    package = root / "src" / "harness"
    package.mkdir(parents=True)
    (root / "harness.toml").write_text("")
    assert find_workspace({"HARNESS_ROOT": str(tmp_path / "other")}, start=package) == (root, "walk")


def test_walk_up_finds_a_dot_harness_directory(tmp_path: Path) -> None:
    package = tmp_path / "src" / "harness"
    package.mkdir(parents=True)
    (tmp_path / ".harness").mkdir()
    (tmp_path / ".harness" / "harness.toml").write_text("")
    assert find_workspace({}, start=package) == (tmp_path / ".harness", "walk")


def test_harness_root_applies_only_when_the_walk_finds_nothing(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    env = {"HARNESS_ROOT": str(tmp_path / "ws")}
    assert find_workspace(env, start=package) == ((tmp_path / "ws").resolve(), "env")


def test_fallback_is_xdg_data_home(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    assert find_workspace({"XDG_DATA_HOME": str(tmp_path / "xdg")}, start=package) == (
        tmp_path / "xdg" / "triage-harness",
        "fallback",
    )
    assert find_workspace({"HOME": str(tmp_path / "home")}, start=package) == (
        tmp_path / "home" / ".local" / "share" / "triage-harness",
        "fallback",
    )


def test_the_workspace_flag_wins_and_paths_resolve_against_it(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "harness.toml").write_text('[store]\nindex_path = "idx/store.sqlite3"\n[ledger]\nurl = "l/ledger.sqlite3"\n')
    settings = load_settings(Overrides(workspace=ws), environ={"HARNESS_ROOT": str(tmp_path / "elsewhere")})
    assert settings.workspace == ws.resolve() and settings.workspace_source == "flag"
    assert settings.store_path == ws.resolve() / "store"
    assert settings.index_path == ws.resolve() / "idx" / "store.sqlite3"
    assert settings.ledger_target == str(ws.resolve() / "l" / "ledger.sqlite3")


def test_ledger_precedence_flag_then_environment_then_config(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "harness.toml").write_text('[ledger]\nurl = "from-config.sqlite3"\n')
    env = {"HARNESS_LEDGER_URL": "postgresql://app@db.internal/ledger"}
    assert load_settings(Overrides(workspace=ws), environ=env).ledger_target == env["HARNESS_LEDGER_URL"]
    flag = load_settings(Overrides(workspace=ws, ledger="postgresql://x@h/y"), environ=env)
    assert flag.ledger_target == "postgresql://x@h/y"
    assert load_settings(Overrides(workspace=ws), environ={}).ledger_target.endswith("from-config.sqlite3")


def test_rules_pin_from_the_environment_wins_and_is_normalized(tmp_path: Path) -> None:
    pin = "AB" * 32
    settings = load_settings(Overrides(workspace=tmp_path), environ={"HARNESS_RULES_SHA256": f"  {pin}  "})
    assert settings.rules_pin == pin.lower()
    with pytest.raises(ConfigError, match="HARNESS_RULES_SHA256: must be 64 hexadecimal digits"):
        load_settings(Overrides(workspace=tmp_path), environ={"HARNESS_RULES_SHA256": "nope"})


def test_unusable_aur_keys_are_reported_not_raised(tmp_path: Path) -> None:
    (tmp_path / "harness.toml").write_text('[aur]\nbase_url = "https://aur.example.org/path"\n')
    settings = load_settings(Overrides(workspace=tmp_path), environ={})
    assert settings.aur_error == "[aur] base_url is invalid"


def test_init_config_lists_every_key_commented_with_its_default() -> None:
    text = default_config_text()
    uncommented = "\n".join(line[2:] for line in text.splitlines() if line.startswith("# ") and "=" in line)
    parsed: dict = {}
    section = ""
    for line in text.splitlines():
        if line.startswith("# [") and line.endswith("]"):
            section = line[3:-1]
            parsed[section] = {}
        elif line.startswith("# ") and " = " in line and section:
            key, _, rest = line[2:].partition(" = ")
            value = rest.split("  #", 1)[0]
            parsed[section][key] = tomllib.loads(f"v = {value}")["v"]
    assert uncommented
    assert {s: set(keys) for s, keys in parsed.items()} == {s: set(keys) for s, keys in SCHEMA.items()}
    for section, keys in SCHEMA.items():
        for key, spec in keys.items():
            default = list(spec.default) if isinstance(spec.default, tuple) else spec.default
            assert parsed[section][key] == default, (section, key)


def test_the_fallback_note_names_only_a_fallback_workspace_without_a_store(tmp_path: Path) -> None:
    from harness.store import Store
    from harness.workspace import fallback_note

    settings = load_settings(Overrides(workspace=tmp_path / "ws"), environ={})
    assert fallback_note(settings) == ""
    fallback = dataclasses.replace(settings, workspace_source="fallback")
    assert fallback_note(fallback).startswith(f'workspace "{settings.workspace}" holds no store: it is the fallback')
    assert "run harness init to create a store there" in fallback_note(fallback)
    Store(settings.store_path).git(create=True)
    assert fallback_note(fallback) == ""


CONNINFO = "host=db password=Pw9secretvalue dbname=x"


@pytest.mark.parametrize("conninfo", [CONNINFO, "  dbname = x", "service=ledger"])
def test_a_key_value_ledger_dsn_is_refused_from_every_source_and_creates_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, conninfo: str
) -> None:
    from runners import run_cli

    workspace = tmp_path / "ws"
    workspace.mkdir()
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.delenv("HARNESS_LEDGER_URL", raising=False)
    flag = run_cli(["--workspace", str(workspace), "--ledger", conninfo, "search_events"])
    monkeypatch.setenv("HARNESS_LEDGER_URL", conninfo)
    env = run_cli(["--workspace", str(workspace), "ledger", "list"])
    monkeypatch.delenv("HARNESS_LEDGER_URL")
    (workspace / "harness.toml").write_text(f"[ledger]\nurl = {conninfo!r}\n".replace("'", '"'))
    config = run_cli(["--workspace", str(workspace), "search_events"])
    for result, field in ((flag, "--ledger"), (env, "HARNESS_LEDGER_URL"), (config, "[ledger] url")):
        assert result.exit_code == 2
        message = result.json()["error"]["message"]
        assert f"{field}: a key=value connection string is not accepted" in message
        assert "Pw9secretvalue" not in result.stdout + result.stderr
    assert list(cwd.iterdir()) == []
    assert sorted(p.name for p in workspace.iterdir()) == ["harness.toml"]


def test_a_sqlite_path_with_an_equals_sign_after_a_slash_is_still_a_path(tmp_path: Path) -> None:
    settings = load_settings(Overrides(workspace=tmp_path, ledger=str(tmp_path / "a=b.sqlite3")))
    assert settings.ledger_target == str(tmp_path / "a=b.sqlite3")

@pytest.mark.parametrize(
    ("toml", "named"),
    [
        ('[serve]\nallowed_hosts = "harness.test"\n', "[serve] allowed_hosts: expected an array"),
        ('[serve]\nallowed_hosts = ["harness.test/mcp"]\n', "[serve] allowed_hosts: expected host or host:port"),
        ('[serve]\nallowed_hosts = ["harness.test:99999"]\n', "[serve] allowed_hosts"),
        ('[serve]\nallowed_origins = ["harness.test"]\n', "[serve] allowed_origins: expected scheme://host"),
        ('[serve]\nallowed_origins = ["https://harness.test/app"]\n', "[serve] allowed_origins"),
        ('[serve]\nauth = "basic"\n', "[serve] auth: must be one of 'bearer', 'oauth'"),
        ('[serve]\nissuer = "http://idp.test"\n', "[serve] issuer: must be an https:// URL"),
        ('[serve]\njwks_url = "https://u:p@idp.test/jwks"\n', "[serve] jwks_url: must not carry userinfo"),
        ('[serve]\nauth = "oauth"\naudience = "https://h.test/mcp"\n', '[serve] issuer: required when auth = "oauth"'),
        ('[serve]\nauth = "oauth"\nissuer = "https://idp.test"\n', "[serve] audience: required"),
        ("[serve]\nlimit = 1\n", "[serve] limit: unknown key"),
        ("[serve]\nsession_idle_timeout_s = 5\n", "[serve] session_idle_timeout_s: must be at least 10, got 5"),
        ("[serve]\nmax_sessions = 0\n", "[serve] max_sessions: must be at least 1, got 0"),
    ],
)
def test_serve_keys_are_validated_naming_the_key(tmp_path: Path, toml: str, named: str) -> None:
    (tmp_path / "harness.toml").write_text(toml)
    with pytest.raises(ConfigError) as raised:
        load_settings(Overrides(workspace=tmp_path), environ={})
    assert named in raised.value.message


def test_serve_lists_are_normalised(tmp_path: Path) -> None:
    (tmp_path / "harness.toml").write_text(
        '[serve]\nallowed_hosts = ["Harness.Test:8443"]\nallowed_origins = ["HTTPS://Agents.Test:443"]\n'
    )
    serve = load_settings(Overrides(workspace=tmp_path), environ={}).serve
    assert serve.allowed_hosts == ("harness.test:8443",)
    assert serve.allowed_origins == ("https://agents.test",)
    assert serve.auth == "bearer"
