"""Settings: workspace resolution, harness.toml validation, and the environment (read only here)."""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from harness import files
from harness.errors import InvalidInput
from harness.ledger.settings import CONNINFO_REFUSED, LedgerSettings, LedgerSettingsError, is_conninfo
from harness.serve import settings as serve_keys
from harness.text.redact import Rule, RuleFileError, load_workspace_rules

CONFIG_NAME = "harness.toml"
REDACTION_RULES_NAME = "rules/redaction.toml"
DEFAULT_GITHUB_API = "https://api.github.com"
DEFAULT_AUR_BASE = "https://aur.archlinux.org"
# harness.toml and rules/redaction.toml are short hand-written files; a larger one is a mistake.
CONFIG_MAX_BYTES = 1024 * 1024


class ConfigError(InvalidInput):
    """A configuration problem; the message names `[section] key`."""


@dataclass(frozen=True)
class Key:
    """One harness.toml key: its default, a one-line comment for `harness init`, and its check."""

    default: Any
    comment: str
    check: Callable[[Any], Any]


def _type_name(value: Any) -> str:
    return {bool: "a boolean", int: "an integer", str: "a string", list: "an array", dict: "a table"}.get(
        type(value), type(value).__name__
    )


def _string(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected a string, got {_type_name(value)}")
    return value


def _boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"expected a boolean, got {_type_name(value)}")
    return value


def _int_range(low: int, high: int) -> Callable[[Any], int]:
    def check(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"expected an integer, got {_type_name(value)}")
        if not low <= value <= high:
            raise ValueError(f"must be from {low} to {high}, got {value}")
        return value

    return check


def _integer(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"expected an integer, got {_type_name(value)}")
    return value


def _string_list(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError("expected an array of strings")
    return tuple(value)


def _sha256_pin(value: Any) -> str:
    pin = _string(value).strip().lower()
    if pin and not re.fullmatch(r"[0-9a-f]{64}", pin):
        raise ValueError("must be 64 hexadecimal digits")
    return pin


def check_https_origin(value: Any, *, allow_path: bool) -> str:
    """An https URL with a host and no userinfo, query or fragment; a path only when allowed."""
    url = _string(value)
    parts = urlsplit(url)
    if parts.scheme != "https":
        raise ValueError(f"must be an https:// URL, got {url!r}")
    if not parts.hostname:
        raise ValueError(f"must name a host, got {url!r}")
    if parts.username is not None or parts.password is not None:
        raise ValueError("must not carry userinfo")
    if parts.query or parts.fragment or url.endswith(("?", "#")):
        raise ValueError("must not carry a query or fragment")
    try:
        parts.port  # noqa: B018 - raises ValueError on an invalid port
    except ValueError as exc:
        raise ValueError(f"has an invalid port: {exc}") from None
    if not allow_path and parts.path not in ("", "/"):
        raise ValueError("must be https://host[:port] without a path")
    return url.rstrip("/") if allow_path else f"https://{parts.netloc}"


SCHEMA: dict[str, dict[str, Key]] = {
    "store": {
        "index_path": Key("", "read index location; default <store dir name>.index.sqlite3 beside the store", _string),
    },
    "rules": {
        "sha256": Key("", "pin of the rule corpus bytes (64 hex); HARNESS_RULES_SHA256 wins", _sha256_pin),
    },
    "github": {
        "api_url": Key(
            DEFAULT_GITHUB_API, "GitHub API base URL (a path prefix such as /api/v3 is allowed)",
            lambda v: check_https_origin(v, allow_path=True),
        ),
        "ca_file": Key("", "PEM bundle replacing the system trust store", _string),
    },
    "aur": {
        "base_url": Key(DEFAULT_AUR_BASE, "AUR origin, https://host[:port] only", lambda v: check_https_origin(v, allow_path=False)),
        "ca_file": Key("", "PEM bundle replacing the system trust store", _string),
        "min_interval_ms": Key(200, "spacing of request starts to the AUR (0..10000)", _int_range(0, 10_000)),
        "backoff_base_ms": Key(1000, "retry backoff base (1..10000)", _int_range(1, 10_000)),
        "max_retries": Key(3, "retries on 429/5xx/connection errors (0..5)", _int_range(0, 5)),
        "retry_after_cap_s": Key(30, "largest Retry-After honoured (1..300)", _int_range(1, 300)),
    },
    "okta": {
        "ca_file": Key("", "PEM bundle replacing the system trust store for `harness pull okta`", _string),
    },
    "pull": {
        "max_wait_s": Key(300, "longest rate-limit wait a pull honours before it stops (1..3600)", _int_range(1, 3600)),
    },
    "triage": {
        "watcher_repo": Key("", "local git checkout of the watcher repository (relative to the workspace)", _string),
    },
    # Checked as a whole by LedgerSettings (harness.ledger.settings), the one place its ranges live.
    "ledger": {
        "url": Key("", "SQLite path or postgresql:// DSN without a password; empty = <workspace>/ledger.sqlite3", _string),
        "sidecars": Key(True, "write full results over the 2 KiB preview cap to sidecars/", _boolean),
        "sidecar_max_bytes": Key(1_048_576, "cap of one sidecar file (4096..67108864)", _integer),
        "end_sync": Key("full", 'SQLite durability of end rows: "full" or "normal"', _string),
        "busy_timeout_ms": Key(5000, "SQLite busy timeout (1..600000)", _integer),
        "pool_max": Key(4, "PostgreSQL pool size (1..64)", _integer),
        "connect_timeout_s": Key(5, "connection timeout (1..300)", _integer),
        "statement_timeout_ms": Key(5000, "PostgreSQL statement_timeout (1..3600000)", _integer),
        "lock_timeout_ms": Key(5000, "PostgreSQL lock_timeout (1..3600000)", _integer),
    },
    # Checked as a whole by ServeSettings (harness.serve.settings) once each key is valid.
    "serve": {
        "allowed_hosts": Key([], "Host values a non-loopback bind accepts: host or host:port", serve_keys.check_hosts),
        "allowed_origins": Key([], "Origin values a non-loopback bind accepts: scheme://host[:port]",
                               serve_keys.check_origins),
        "auth": Key("bearer", '"bearer" (HARNESS_SERVE_TOKEN off loopback) or "oauth" (JWT access tokens)',
                    serve_keys.check_auth),
        "issuer": Key("", "OAuth authorization server issuer (https URL); required with auth = \"oauth\"",
                      lambda v: serve_keys.check_url(v, schemes=("https",))),
        "audience": Key("", "this server's resource URL, e.g. https://harness.example/mcp; required with oauth",
                        lambda v: serve_keys.check_url(v, schemes=("https", "http"))),
        "jwks_url": Key("", "JWKS URL; empty = jwks_uri from the issuer's metadata",
                        lambda v: serve_keys.check_url(v, schemes=("https",))),
        "ca_file": Key("", "PEM bundle replacing the system trust store for the issuer and JWKS", _string),
        "session_idle_timeout_s": Key(300, "an HTTP session idle this long is closed (10..86400)",
                                      _int_range(10, 86_400)),
        "max_sessions": Key(1000, "open HTTP sessions at most; more answer 503 (1..100000)", _int_range(1, 100_000)),
        "rate_per_minute": Key(600, "tool calls a minute per caller over HTTP (1..100000)", _int_range(1, 100_000)),
        "burst": Key(60, "tool calls a caller may make at once before the rate applies (1..10000)",
                     _int_range(1, 10_000)),
        "sessions_per_minute": Key(30, "new HTTP sessions a minute per caller; more answer 429 (1..10000)",
                                   _int_range(1, 10_000)),
        "session_burst": Key(10, "new HTTP sessions a caller may open at once (1..10000)", _int_range(1, 10_000)),
        "max_sessions_per_caller": Key(20, "open HTTP sessions per caller at most; more answer 429 (1..100000)",
                                       _int_range(1, 100_000)),
        "max_concurrent_calls": Key(8, "tool calls in flight per caller over HTTP (1..256)", _int_range(1, 256)),
    },
    "redaction": {
        "secret_env": Key([], "extra environment variable names whose values are secrets", _string_list),
        "not_secret_env": Key([], "names that look secret but are not", _string_list),
    },
}

# An unusable [aur] section does not stop the harness: fp_agent_verify reports it (docs/triage.md §1).
_SOFT_SECTIONS = frozenset({"aur"})


@dataclass(frozen=True)
class Overrides:
    """Global CLI options; None means not given."""

    workspace: Path | None = None
    store: Path | None = None
    ledger: str | None = None
    rules: Path | None = None
    baseline: Path | None = None


@dataclass(frozen=True)
class Settings:
    """Everything resolved once per process: paths, validated keys, and secrets from the environment."""

    workspace: Path
    workspace_source: str
    store_path: Path
    index_path: Path
    ledger_target: str
    rules_path: Path | None
    baseline_path: Path | None
    rules_pin: str
    values: Mapping[str, Mapping[str, Any]]
    aur_error: str
    github_token: str
    serve_token: str
    okta_token: str
    conversation_env: str
    environ: Mapping[str, str] = field(repr=False)
    redaction_rules: tuple[Rule, ...] = ()

    @property
    def serve(self) -> serve_keys.ServeSettings:
        """The validated `[serve]` settings."""
        return serve_keys.ServeSettings.from_values(self.values["serve"])

    @property
    def ledger(self) -> LedgerSettings:
        """The validated `[ledger]` settings."""
        return LedgerSettings(**self.values["ledger"])

    def get(self, section: str, key: str) -> Any:
        """A validated key value (its default when absent)."""
        return self.values[section][key]

    def workspace_path(self, value: str) -> Path | None:
        """A config path resolved against the workspace; None when empty."""
        if not value:
            return None
        path = Path(value).expanduser()
        return path if path.is_absolute() else self.workspace / path


def package_dir() -> Path:
    """The directory of the installed `harness` package."""
    return Path(__file__).resolve().parent


def find_workspace(environ: Mapping[str, str], *, start: Path | None = None) -> tuple[Path, str]:
    """The workspace per docs/architecture.md: walk up from the package, then HARNESS_ROOT, then XDG data."""
    here = (start or package_dir()).resolve()
    for directory in (here, *here.parents):
        if (directory / CONFIG_NAME).is_file():
            return directory, "walk"
        if (directory / ".harness" / CONFIG_NAME).is_file():
            return directory / ".harness", "walk"
    root = environ.get("HARNESS_ROOT", "")
    if root:
        return Path(root).expanduser().resolve(), "env"
    data = environ.get("XDG_DATA_HOME", "") or str(Path(environ.get("HOME", str(Path.home()))) / ".local" / "share")
    return Path(data) / "triage-harness", "fallback"


def read_config_file(path: Path) -> dict[str, Any]:
    """Parse harness.toml; a missing file is an empty configuration."""
    try:
        data = files.read_regular(path, CONFIG_MAX_BYTES, follow_symlinks=True)
    except files.FileMissing:
        return {}
    except files.FileRefused as exc:
        raise ConfigError(str(exc)) from None
    try:
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: is not UTF-8") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: {exc}") from None


def read_redaction_rules(workspace: Path) -> tuple[Rule, ...]:
    """The workspace's own redaction rules (`rules/redaction.toml`, optional), each checked against its examples."""
    path = workspace / REDACTION_RULES_NAME
    try:
        data = files.read_regular(path, CONFIG_MAX_BYTES, follow_symlinks=True)
    except files.FileMissing:
        return ()
    except files.FileRefused as exc:
        raise ConfigError(str(exc)) from None
    try:
        return load_workspace_rules(data.decode("utf-8"), str(path))
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: is not UTF-8") from None
    except RuleFileError as exc:
        raise ConfigError(str(exc)) from None


def validate(raw: Mapping[str, Any], source: str) -> tuple[dict[str, dict[str, Any]], str]:
    """Check every section and key; returns the values with defaults filled and the [aur] problem, if any."""
    values: dict[str, dict[str, Any]] = {}
    aur_error = ""
    for section in raw:
        if section not in SCHEMA:
            raise ConfigError(f"{source}: [{section}]: unknown section; known sections are {', '.join(SCHEMA)}")
        if not isinstance(raw[section], dict):
            raise ConfigError(f"{source}: [{section}]: expected a table")
    for section, keys in SCHEMA.items():
        given = raw.get(section, {})
        out: dict[str, Any] = {}
        for key in given:
            if key not in keys:
                raise ConfigError(f"{source}: [{section}] {key}: unknown key; known keys are {', '.join(keys)}")
        for key, spec in keys.items():
            if key not in given:
                out[key] = spec.check(spec.default)
                continue
            try:
                out[key] = spec.check(given[key])
            except ValueError as exc:
                if section in _SOFT_SECTIONS:
                    aur_error = aur_error or f"[{section}] {key} is invalid"
                    out[key] = None
                    continue
                raise ConfigError(f"{source}: [{section}] {key}: {exc}") from None
        values[section] = out
    try:
        LedgerSettings.from_table(raw.get("ledger", {}))
    except LedgerSettingsError as exc:
        raise ConfigError(f"{source}: {exc}") from None
    try:
        serve_keys.ServeSettings.from_values(values["serve"])
    except ValueError as exc:
        raise ConfigError(f"{source}: {exc}") from None
    return values, aur_error


def process_environment() -> dict[str, str]:
    """A copy of the process environment (the one place it is read)."""
    return dict(os.environ)


def load_settings(overrides: Overrides, environ: Mapping[str, str] | None = None) -> Settings:
    """Resolve the workspace and validate its harness.toml; raises ConfigError naming `[section] key`."""
    env = process_environment() if environ is None else dict(environ)
    if overrides.workspace is not None:
        workspace, source = overrides.workspace.expanduser().resolve(), "flag"
    else:
        workspace, source = find_workspace(env)
    config_path = workspace / CONFIG_NAME
    values, aur_error = validate(read_config_file(config_path), str(config_path))

    pin = env.get("HARNESS_RULES_SHA256")
    if pin is not None:
        try:
            pin = _sha256_pin(pin)
        except ValueError as exc:
            raise ConfigError(f"HARNESS_RULES_SHA256: {exc}") from None
    else:
        pin = values["rules"]["sha256"]

    store_path = overrides.store.resolve() if overrides.store else workspace / "store"
    configured_index = values["store"]["index_path"]
    if configured_index:
        index = Path(configured_index).expanduser()
        index_path = index if index.is_absolute() else workspace / index
    else:
        index_path = store_path.parent / f"{store_path.name}.index.sqlite3"

    ledger_target = overrides.ledger or env.get("HARNESS_LEDGER_URL", "") or values["ledger"]["url"]
    if is_conninfo(ledger_target):
        given_by = "--ledger" if overrides.ledger else "HARNESS_LEDGER_URL"
        raise ConfigError(f"{given_by}: {CONNINFO_REFUSED}")
    if not ledger_target:
        ledger_target = str(workspace / "ledger.sqlite3")
    elif "://" not in ledger_target and not Path(ledger_target).is_absolute():
        # A flag path is relative to the current directory, a config path to the workspace.
        base = Path.cwd() if overrides.ledger else workspace
        ledger_target = str(base / ledger_target)

    return Settings(
        workspace=workspace,
        workspace_source=source,
        store_path=store_path,
        index_path=index_path,
        ledger_target=ledger_target,
        rules_path=overrides.rules.resolve() if overrides.rules else None,
        baseline_path=overrides.baseline.resolve() if overrides.baseline else None,
        rules_pin=pin,
        values=values,
        aur_error=aur_error,
        github_token=env.get("GITHUB_TOKEN", "").strip(),
        serve_token=env.get("HARNESS_SERVE_TOKEN", ""),
        okta_token=env.get("OKTA_API_TOKEN", "").strip(),
        conversation_env=env.get("HARNESS_CONVERSATION_ID", ""),
        environ=env,
        redaction_rules=read_redaction_rules(workspace),
    )


def default_config_text() -> str:
    """The harness.toml `harness init` writes: every key, commented out, with its default."""
    lines = [
        "# triage-harness configuration. Every key is optional; the values shown are the defaults.",
        "# Secrets never go here: GITHUB_TOKEN, OKTA_API_TOKEN, HARNESS_LEDGER_URL and HARNESS_SERVE_TOKEN come from the environment.",
        "",
    ]
    for section, keys in SCHEMA.items():
        lines.append(f"# [{section}]")
        for key, spec in keys.items():
            lines.append(f"# {key} = {_toml_value(spec.default)}  # {spec.comment}")
        lines.append("")
    return "\n".join(lines)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'
