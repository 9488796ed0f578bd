"""Fixtures for the store tests: real git repositories and real SQLite in temporary directories."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harness.store import Store


@pytest.fixture
def make_store(tmp_path: Path) -> Callable[..., Store]:
    """Build a Store under tmp_path (tiny segment limits are passed by the test)."""

    def build(name: str = "store", **kwargs: Any) -> Store:
        return Store(tmp_path / name, **kwargs)

    return build


@pytest.fixture
def store(make_store: Callable[..., Store]) -> Store:
    return make_store()
