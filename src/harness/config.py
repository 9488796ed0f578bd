"""Settings: workspace resolution, harness.toml validation, and the environment (read only here)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import tomli
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError
from pydantic.fields import FieldInfo

from harness import files
from harness.errors import InvalidInput
from harness.ledger.settings import CONNINFO_REFUSED, LedgerSettings, dsn_has_password, is_conninfo, is_postgres_target
from harness.net.aur_ranges import AUR_RANGES
from harness.serve import settings as serve_keys
from harness.telemetry import settings as telemetry_keys
from harness.validation import configured_url, describe_config_error

if TYPE_CHECKING:
    from harness.text.redact import Rule

CONFIG_NAME = "harness.toml"
REDACTION_RULES_NAME = "rules/redaction.toml"
DEFAULT_GITHUB_API = "https://api.github.com"
DEFAULT_AUR_BASE = "https://aur.archlinux.org"
# harness.toml and rules/redaction.toml are short hand-written files; a larger one is a mistake.
CONFIG_MAX_BYTES = 1024 * 1024


class ConfigError(InvalidInput):
    """A configuration problem; the message names `[section] key`."""


def _sha256_pin(value: str) -> str:
    pin = value.strip().lower()
    if pin and not re.fullmatch(r"[0-9a-f]{64}", pin):
        raise ValueError("must be 64 hexadecimal digits")
    return pin


def check_https_origin(value: Any, *, allow_path: bool) -> str:
    """An https URL with a host and no userinfo, query or fragment; a path only when allowed."""
    parts = configured_url(value, schemes=("https",))
    if not allow_path and parts.path not in ("", "/"):
        raise ValueError("must be https://host[:port] without a path")
    return value.rstrip("/") if allow_path else f"https://{parts.netloc}"


def _bounded(default: int, low: int, high: int, comment: str) -> Any:
    """An integer key with its inclusive range; `harness init` shows the range after the comment."""
    return Field(default, ge=low, le=high, description=f"{comment} ({low}..{high})")


def _key(default: Any, comment: str) -> Any:
    return Field(default, description=comment)


_PEM = "PEM bundle replacing the system trust store"
_Pin = Annotated[str, AfterValidator(_sha256_pin)]
_ApiUrl = Annotated[str, AfterValidator(lambda v: check_https_origin(v, allow_path=True))]
_Origin = Annotated[str, AfterValidator(lambda v: check_https_origin(v, allow_path=False))]
_Hosts = Annotated[tuple[str, ...], Field(strict=False), AfterValidator(lambda v: serve_keys.check_hosts(list(v)))]
_Origins = Annotated[tuple[str, ...], Field(strict=False), AfterValidator(lambda v: serve_keys.check_origins(list(v)))]
_Names = Annotated[tuple[str, ...], Field(strict=False)]


class _Section(BaseModel):
    """One harness.toml section: unknown keys refused, no type coercion (TOML types are exact)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


def _store_url(url: str) -> str:
    # The DSN may carry a password: like the ledger's, it is only accepted from the environment or the flag.
    if is_conninfo(url):
        raise ValueError(CONNINFO_REFUSED)
    if url and not is_postgres_target(url):
        raise ValueError("must be a postgresql:// DSN (the git store is the default and needs no url)")
    if dsn_has_password(url):
        raise ValueError("must not hold a password; put the DSN in HARNESS_STORE_URL")
    return url


class StoreSection(_Section):
    index_path: str = _key("", "read index location; default <store dir name>.index.sqlite3 beside the store")
    url: Annotated[str, AfterValidator(_store_url)] = _key(
        "", "postgresql:// DSN without a password of a PostgreSQL store; empty = the git store"
    )
    pool_max: int = _bounded(4, 1, 64, "PostgreSQL store pool size")
    connect_timeout_s: int = _bounded(5, 1, 300, "PostgreSQL store connection timeout")
    statement_timeout_ms: int = _bounded(300_000, 1, 3_600_000, "PostgreSQL store statement_timeout")
    lock_timeout_ms: int = _bounded(300_000, 1, 3_600_000, "PostgreSQL store lock_timeout (appends wait in turn)")


class RulesSection(_Section):
    sha256: _Pin = _key("", "pin of the rule corpus bytes (64 hex); HARNESS_RULES_SHA256 wins")


class GithubSection(_Section):
    api_url: _ApiUrl = _key(DEFAULT_GITHUB_API, "GitHub API base URL (a path prefix such as /api/v3 is allowed)")
    ca_file: str = _key("", _PEM)


def _aur(key: str, default: int, comment: str) -> Any:
    low, high = AUR_RANGES[key]
    return _bounded(default, low, high, comment)


class AurSection(_Section):
    base_url: _Origin = _key(DEFAULT_AUR_BASE, "AUR origin, https://host[:port] only")
    ca_file: str = _key("", _PEM)
    min_interval_ms: int = _aur("min_interval_ms", 200, "spacing of request starts to the AUR")
    backoff_base_ms: int = _aur("backoff_base_ms", 1000, "retry backoff base")
    max_retries: int = _aur("max_retries", 3, "retries on 429/5xx/connection errors")
    retry_after_cap_s: int = _aur("retry_after_cap_s", 30, "largest Retry-After honoured")


class OktaSection(_Section):
    ca_file: str = _key("", f"{_PEM} for `harness pull okta`")


class PullSection(_Section):
    max_wait_s: int = _bounded(300, 1, 3600, "longest rate-limit wait a pull honours before it stops")


class TriageSection(_Section):
    watcher_repo: str = _key("", "local git checkout of the watcher repository (relative to the workspace)")


class ServeSection(_Section):
    """Checked key by key here, then as a whole by ServeSettings (harness.serve.settings)."""

    allowed_hosts: _Hosts = _key((), "Host values a non-loopback bind accepts: host or host:port")
    allowed_origins: _Origins = _key((), "Origin values a non-loopback bind accepts: scheme://host[:port]")
    auth: Annotated[str, AfterValidator(serve_keys.check_auth)] = _key(
        "bearer", '"bearer" (HARNESS_SERVE_TOKEN off loopback) or "oauth" (JWT access tokens)'
    )
    issuer: Annotated[str, AfterValidator(lambda v: serve_keys.check_url(v, schemes=("https",)))] = _key(
        "", 'OAuth authorization server issuer (https URL); required with auth = "oauth"'
    )
    audience: Annotated[str, AfterValidator(lambda v: serve_keys.check_url(v, schemes=("https", "http")))] = _key(
        "", "this server's resource URL, e.g. https://harness.example/mcp; required with oauth"
    )
    jwks_url: Annotated[str, AfterValidator(lambda v: serve_keys.check_url(v, schemes=("https",)))] = _key(
        "", "JWKS URL; empty = jwks_uri from the issuer's metadata"
    )
    ca_file: str = _key("", f"{_PEM} for the issuer and JWKS")
    session_idle_timeout_s: int = _bounded(300, 10, 86_400, "an HTTP session idle this long is closed")
    max_sessions: int = _bounded(1000, 1, 100_000, "open HTTP sessions at most; more answer 503")
    rate_per_minute: int = _bounded(600, 1, 100_000, "tool calls a minute per caller over HTTP")
    burst: int = _bounded(60, 1, 10_000, "tool calls a caller may make at once before the rate applies")
    sessions_per_minute: int = _bounded(30, 1, 10_000, "new HTTP sessions a minute per caller; more answer 429")
    session_burst: int = _bounded(10, 1, 10_000, "new HTTP sessions a caller may open at once")
    max_sessions_per_caller: int = _bounded(20, 1, 100_000, "open HTTP sessions per caller at most; more answer 429")
    max_concurrent_calls: int = _bounded(8, 1, 256, "tool calls in flight per caller over HTTP, in each lane")


class TelemetrySection(_Section):
    """The effective endpoint (OTEL_EXPORTER_OTLP_ENDPOINT wins) is resolved by harness.telemetry.settings."""

    endpoint: Annotated[str, AfterValidator(telemetry_keys.check_endpoint)] = _key(
        "", "OTLP/HTTP collector base URL, e.g. http://127.0.0.1:4318; empty = no telemetry"
    )
    content: bool = _key(False, "export the ledger's redacted arguments and result preview with each span")


class RedactionSection(_Section):
    secret_env: _Names = _key((), "extra environment variable names whose values are secrets")
    not_secret_env: _Names = _key((), "names that look secret but are not")


class HarnessConfig(_Section):
    """The whole of harness.toml: every section optional, each with its defaults. The `[ledger]` model is
    LedgerSettings itself (harness.ledger.settings), the one place its ranges live."""

    store: StoreSection = StoreSection()
    rules: RulesSection = RulesSection()
    github: GithubSection = GithubSection()
    aur: AurSection = AurSection()
    okta: OktaSection = OktaSection()
    pull: PullSection = PullSection()
    triage: TriageSection = TriageSection()
    ledger: LedgerSettings = LedgerSettings()
    serve: ServeSection = ServeSection()
    telemetry: TelemetrySection = TelemetrySection()
    redaction: RedactionSection = RedactionSection()


# Every section's keys with their defaults and comments (FieldInfo), in file order: the one source of both.
SCHEMA: dict[str, dict[str, FieldInfo]] = {
    name: dict(field.annotation.model_fields)  # type: ignore[union-attr]
    for name, field in HarnessConfig.model_fields.items()
}

# An unusable [aur] section does not stop the harness: fp_agent_verify reports it (docs/triage.md §1).
_SOFT_SECTIONS = frozenset({"aur"})


@dataclass(frozen=True)
class Overrides:
    """Global CLI options; None means not given."""

    workspace: Path | None = None
    store: Path | None = None
    store_url: str | None = None
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
    telemetry: telemetry_keys.TelemetrySettings = telemetry_keys.TelemetrySettings()
    # The PostgreSQL store's DSN ("" = the git store at store_path); it may hold a password, so it is never shown.
    store_url: str = field(default="", repr=False)

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
    text = _read_operator_text(path)
    if text is None:
        return {}
    try:
        return tomli.loads(text)
    except tomli.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: {exc}") from None


def read_redaction_rules(workspace: Path) -> tuple[Rule, ...]:
    """The workspace's own redaction rules (`rules/redaction.toml`, optional), each checked against its examples."""
    # The redactor is imported where rules are read, not with this module: `harness --help` needs neither.
    from harness.text.redact import RuleFileError, load_workspace_rules

    path = workspace / REDACTION_RULES_NAME
    text = _read_operator_text(path)
    if text is None:
        return ()
    try:
        return load_workspace_rules(text, str(path))
    except RuleFileError as exc:
        raise ConfigError(str(exc)) from None


def _read_operator_text(path: Path) -> str | None:
    """The UTF-8 text of a file the operator keeps (followed if a symlink), or None when there is none."""
    try:
        return files.read_text(path, CONFIG_MAX_BYTES, follow_symlinks=True)
    except files.FileMissing:
        return None
    except files.FileRefused as exc:
        raise ConfigError(str(exc)) from None


def _section_values(model: BaseModel) -> dict[str, Any]:
    return {name: getattr(model, name) for name in type(model).model_fields}


def validate(raw: Mapping[str, Any], source: str) -> tuple[dict[str, dict[str, Any]], str]:
    """Check every section and key; returns the values with defaults filled and the [aur] problem, if any."""
    try:
        config = HarnessConfig.model_validate(raw)
        aur_error = ""
        soft: list[str] = []
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        hard = [e for e in errors if not _is_soft(e)]
        if hard:
            raise ConfigError(f"{source}: {describe_config_error(hard, HarnessConfig)}") from None
        keys = list(AurSection.model_fields)
        soft = sorted({str(e["loc"][1]) for e in errors}, key=keys.index)
        aur_error = f"[aur] {soft[0]} is invalid"
        kept = {k: v for k, v in raw["aur"].items() if k not in soft}
        config = HarnessConfig.model_validate({**raw, "aur": kept})
    values = {section: _section_values(getattr(config, section)) for section in HarnessConfig.model_fields}
    for key in soft:
        values["aur"][key] = None
    try:
        serve_keys.ServeSettings.from_values(values["serve"])
    except ValueError as exc:
        raise ConfigError(f"{source}: {exc}") from None
    return values, aur_error


def _is_soft(error: Any) -> bool:
    loc = error["loc"]
    return len(loc) >= 2 and loc[0] in _SOFT_SECTIONS and error["type"] != "extra_forbidden"


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

    store_url = "" if overrides.store else overrides.store_url or env.get("HARNESS_STORE_URL", "") or values["store"]["url"]
    if store_url and not is_postgres_target(store_url):
        given_by = "--store" if overrides.store_url else "HARNESS_STORE_URL"
        raise ConfigError(f"{given_by}: {CONNINFO_REFUSED if is_conninfo(store_url) else 'must be a postgresql:// DSN'}")

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

    try:
        telemetry = telemetry_keys.resolve(values["telemetry"], env)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None

    return Settings(
        workspace=workspace,
        workspace_source=source,
        store_path=store_path,
        index_path=index_path,
        ledger_target=ledger_target,
        store_url=store_url,
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
        telemetry=telemetry,
    )


def default_config_text() -> str:
    """The harness.toml `harness init` writes: every key, commented out, with its default."""
    lines = [
        "# triage-harness configuration. Every key is optional; the values shown are the defaults.",
        "# Secrets never go here: GITHUB_TOKEN, OKTA_API_TOKEN, HARNESS_LEDGER_URL, HARNESS_STORE_URL and HARNESS_SERVE_TOKEN come from the environment.",
        "",
    ]
    for section, keys in SCHEMA.items():
        lines.append(f"# [{section}]")
        for key, spec in keys.items():
            lines.append(f"# {key} = {_toml_value(spec.default)}  # {spec.description}")
        lines.append("")
    return "\n".join(lines)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'
