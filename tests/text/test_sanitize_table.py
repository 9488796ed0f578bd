"""The precomputed Cf/Cs table used at start-up equals a fresh scan of the Unicode database."""

from __future__ import annotations

import unicodedata

from harness.text import sanitize


def test_table_for_the_running_unicode_version_matches_a_scan() -> None:
    scanned = [cp for cp in range(0x110000) if unicodedata.category(chr(cp)) in ("Cf", "Cs")]
    assert sanitize.format_code_points(version="no-such-version") == scanned
    assert sanitize.format_code_points() == scanned
