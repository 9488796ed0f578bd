"""The [ledger] settings (docs/ledger.md §13): defaults, types, ranges and the password rule."""

from __future__ import annotations

import dataclasses

import pytest

from harness.ledger.settings import RANGES, LedgerSettings, LedgerSettingsError, dsn_has_password, is_postgres_target


def test_defaults() -> None:
    s = LedgerSettings()
    assert dataclasses.asdict(s) == {
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
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.pool_max = 9  # type: ignore[misc]


@pytest.mark.parametrize("key", sorted(RANGES))
def test_ranges_are_inclusive_and_enforced(key: str) -> None:
    low, high = RANGES[key]
    assert getattr(LedgerSettings(**{key: low}), key) == low
    assert getattr(LedgerSettings(**{key: high}), key) == high
    for bad in (low - 1, high + 1, True, "5", 5.0):
        with pytest.raises(LedgerSettingsError, match=rf"^\[ledger\] {key}: "):
            LedgerSettings(**{key: bad})


def test_enumerations_and_types() -> None:
    assert LedgerSettings(end_sync="normal").end_sync == "normal"
    with pytest.raises(LedgerSettingsError, match=r"\[ledger\] end_sync"):
        LedgerSettings(end_sync="off")
    with pytest.raises(LedgerSettingsError, match=r"\[ledger\] sidecars"):
        LedgerSettings(sidecars=1)  # type: ignore[arg-type]
    with pytest.raises(LedgerSettingsError, match=r"\[ledger\] url"):
        LedgerSettings(url=5)  # type: ignore[arg-type]


def test_from_table() -> None:
    assert LedgerSettings.from_table({"pool_max": 8, "url": "postgresql://app@db/ledger"}).pool_max == 8
    with pytest.raises(LedgerSettingsError, match=r"^\[ledger\] pool_size: unknown key"):
        LedgerSettings.from_table({"pool_size": 8})
    with pytest.raises(LedgerSettingsError, match=r"^\[ledger\] url: must not hold a password"):
        LedgerSettings.from_table({"url": "postgresql://app:hunter2@db/ledger"})
    with pytest.raises(LedgerSettingsError, match=r"\[ledger\] url"):
        LedgerSettings.from_table({"url": "postgresql://app@db/ledger?password=hunter2"})


def test_target_kinds() -> None:
    assert is_postgres_target("postgresql://h/db") and is_postgres_target("postgres://h/db")
    assert not is_postgres_target("/var/lib/ledger.sqlite3")
    assert not dsn_has_password("/path/with:colon@at")
    assert dsn_has_password("postgres://u:p@h/db") and not dsn_has_password("postgres://u@h/db")
