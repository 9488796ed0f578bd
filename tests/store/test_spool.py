"""The ingest spool (store/spool.py): records back in append order, by position, and the first position of a key."""

from __future__ import annotations

import pytest

from harness.store import spool as spool_module
from harness.store.spool import Spool


def test_records_come_back_in_order_by_position_and_by_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spool_module, "_READ_CHUNK", 64)  # iteration crosses many chunk boundaries
    spool = Spool()
    try:
        records = [(f"évt-{n}", f'{{"id":"ÉVT-{n}","pad":"{"x" * (n % 50)}"}}'.encode()) for n in range(300)]
        for key, line in records:
            assert spool.position(key) is None
            spool.append(key, line)
        assert len(spool) == 300
        assert list(spool) == records
        assert spool[0] == records[0] and spool[-1] == records[-1] and spool[5:8] == records[5:8]
        assert spool.position("évt-123") == 123
        assert spool.position("ÉVT-123") is None  # keys are compared exactly; the caller lower-cases them
        with pytest.raises(IndexError):
            spool[300]
    finally:
        spool.close()
