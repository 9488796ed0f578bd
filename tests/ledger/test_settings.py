"""The [ledger] settings (docs/ledger.md §13): defaults, types, ranges and the password rule, read through
harness.toml's validation so every message names `[ledger] key`."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from harness.config import ConfigError, validate
from harness.ledger.settings import LedgerSettings, dsn_has_password, is_postgres_target


# The inclusive range of each bounded key, read from the model: the one place they are written.
def _bound(field: Any, name: str) -> int:
    return next(getattr(m, name) for m in field.metadata if hasattr(m, name))


RANGES = {
    name: (_bound(field, "ge"), _bound(field, "le"))
    for name, field in LedgerSettings.model_fields.items()
    if field.annotation is int
}


def _ledger_error(table: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as raised:
        validate({"ledger": table}, "harness.toml")
    return raised.value.message


def test_defaults() -> None:
    s = LedgerSettings()
    assert s.model_dump() == {
        "url": "",
        "sidecars": True,
        "sidecar_max_bytes": 1_048_576,
        "end_sync": "full",
        "busy_timeout_ms": 5000,
        "pool_max": 4,
        "connect_timeout_s": 5,
        "statement_timeout_ms": 5000,
        "lock_timeout_ms": 5000,
    }
    with pytest.raises(ValidationError):
        s.pool_max = 9  # type: ignore[misc]


def test_every_integer_key_is_bounded() -> None:
    assert set(RANGES) == {
        "sidecar_max_bytes", "busy_timeout_ms", "pool_max", "connect_timeout_s", "statement_timeout_ms",
        "lock_timeout_ms",
    }
    assert RANGES["sidecar_max_bytes"] == (4096, 64 * 1024 * 1024) and RANGES["pool_max"] == (1, 64)


@pytest.mark.parametrize("key", sorted(RANGES))
def test_ranges_are_inclusive_and_enforced(key: str) -> None:
    low, high = RANGES[key]
    assert getattr(LedgerSettings(**{key: low}), key) == low
    assert getattr(LedgerSettings(**{key: high}), key) == high
    assert _ledger_error({key: low - 1}) == f"harness.toml: [ledger] {key}: must be at least {low}, got {low - 1}"
    assert _ledger_error({key: high + 1}) == f"harness.toml: [ledger] {key}: must be at most {high}, got {high + 1}"
    for bad in (True, "5", 5.0):
        assert _ledger_error({key: bad}).startswith(f"harness.toml: [ledger] {key}: expected an integer, got ")


def test_enumerations_and_types() -> None:
    assert LedgerSettings(end_sync="normal").end_sync == "normal"
    assert _ledger_error({"end_sync": "off"}).endswith(
        "[ledger] end_sync: must be one of 'full' or 'normal', got \"off\""
    )
    assert _ledger_error({"sidecars": 1}).endswith("[ledger] sidecars: expected a boolean, got 1")
    assert _ledger_error({"url": 5}).endswith("[ledger] url: expected a string, got an integer")


def test_unknown_keys_and_passwords() -> None:
    values, _ = validate({"ledger": {"pool_max": 8, "url": "postgresql://app@db/ledger"}}, "harness.toml")
    assert values["ledger"]["pool_max"] == 8
    assert "[ledger] pool_size: unknown key" in _ledger_error({"pool_size": 8})
    assert "[ledger] url: must not hold a password" in _ledger_error({"url": "postgresql://app:hunter2@db/ledger"})
    assert "[ledger] url: must not hold a password" in _ledger_error({"url": "postgresql://app@db/ledger?password=x"})


def test_target_kinds() -> None:
    assert is_postgres_target("postgresql://h/db") and is_postgres_target("postgres://h/db")
    assert not is_postgres_target("/var/lib/ledger.sqlite3")
    assert not dsn_has_password("/path/with:colon@at")
    assert dsn_has_password("postgres://u:p@h/db") and not dsn_has_password("postgres://u@h/db")
