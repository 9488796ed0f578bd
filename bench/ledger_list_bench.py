"""`harness ledger list` at scale (issue 11 goal 3, docs/ledger.md §12): each filter's latency on a SQLite ledger of
N rows, against a bare indexed SELECT of one page in the same run.

Usage: python bench/ledger_list_bench.py [--quick] [--rows N] [--keep DIR]. Prints one JSON object on stdout, each
figure the median CPU milliseconds of 3 runs (wall time beside it). The
ledger is generated straight into the migrated schema (valid shapes, constant hashes: verify is not the point);
the baseline is `SELECT id ... INDEXED BY tool_invocations_list ... LIMIT 101`, the least a page can cost.
"""

from __future__ import annotations

import argparse
import datetime
import sqlite3
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from _common import emit, median, row
from ledger_sqlite_bench import bench_redactor, utc_now

from harness.ledger import commands
from harness.ledger.dialect import COLUMNS_SQL
from harness.ledger.model import format_ts
from harness.ledger.settings import LedgerSettings
from harness.ledger.sqlite import open_sqlite_store
from harness.text.redact import RULESET_VERSION

CALLS_PER_CONVERSATION = 25
TOOLS = ("search_events", "check_baseline", "get_raw_event", "search_findings")
PRINCIPALS = tuple(f"user{n}@example.test" for n in range(8))
T0 = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
TARGET_MS = 50.0
_BASELINE = (
    "SELECT id FROM tool_invocations INDEXED BY tool_invocations_list WHERE event = 'start'"
    " ORDER BY started_at DESC, conversation_id, seq DESC LIMIT 101"
)


def _rows(total: int) -> Iterator[tuple[Any, ...]]:
    """Starts and ends, one call a second; one call in 20 fails, the last call of each 500th conversation is in
    flight."""
    hash_ = bytes(32)
    n = 0
    conversation = 0
    while n < total:
        cid = f"conv-{conversation:07d}"
        meta = '{"caller":{"principal":"' + PRINCIPALS[conversation % len(PRINCIPALS)] + '"}}'
        chain_seq = 0
        for call in range(CALLS_PER_CONVERSATION):
            at = format_ts(T0 + datetime.timedelta(seconds=n // 2))
            tool = TOOLS[(conversation + call) % len(TOOLS)]
            key = (cid, f"r{call}", f"k{call}")
            chain_seq += 1
            yield (
                f"{n:08x}-0000-7000-8000-000000000000",
                *key,
                tool,
                "start",
                call + 1,
                at,
                at,
                None,
                None,
                "{}",
                2,
                None,
                None,
                None,
                None,
                None,
                None,
                None,
                None,
                meta,
                RULESET_VERSION,
                chain_seq,
                hash_,
                hash_,
            )
            n += 1
            if call == CALLS_PER_CONVERSATION - 1 and conversation % 500 == 0:
                continue
            failed = (conversation + call) % 20 == 0
            chain_seq += 1
            yield (
                f"{n:08x}-0000-7000-8000-000000000000",
                *key,
                tool,
                "end",
                call + 1,
                at,
                at,
                at,
                3,
                None,
                None,
                "error" if failed else "ok",
                "not_found: x" if failed else None,
                "{}",
                2,
                2,
                False,
                None,
                0,
                None,
                RULESET_VERSION,
                chain_seq,
                hash_,
                hash_,
            )
            n += 1
        conversation += 1


def build(path: Path, total: int) -> None:
    """A migrated ledger holding `total` rows (and their conversations)."""
    open_sqlite_store(
        path, redactor=bench_redactor(), clock=utc_now, settings=LedgerSettings(), redaction_version=RULESET_VERSION
    ).close()
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA synchronous = OFF")
    conn.execute("BEGIN")
    conversations = (total + 2 * CALLS_PER_CONVERSATION - 1) // (2 * CALLS_PER_CONVERSATION) + 1
    conn.executemany(
        "INSERT INTO conversations VALUES (?, ?)", ((f"conv-{c:07d}", format_ts(T0)) for c in range(conversations))
    )
    marks = ", ".join(["?"] * 26)
    conn.executemany(f"INSERT INTO tool_invocations ({COLUMNS_SQL}) VALUES ({marks})", _rows(total))
    conn.execute("COMMIT")
    conn.execute("ANALYZE")
    conn.close()


def timed(work: Callable[[], Any], rounds: int = 3) -> tuple[float, float]:
    """(median CPU ms, median wall ms) of `rounds` runs after one warm-up. The CPU time of this process is the
    figure: on a loaded machine the wall time of a few-millisecond query is mostly waiting for a core."""
    work()
    cpu, wall = [], []
    for _ in range(rounds):
        started, started_cpu = time.perf_counter(), time.process_time()
        work()
        cpu.append((time.process_time() - started_cpu) * 1000)
        wall.append((time.perf_counter() - started) * 1000)
    return median(cpu), median(wall)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a seconds-long smoke run")
    parser.add_argument("--rows", type=int, default=None, help="ledger rows (default 1,000,000)")
    parser.add_argument("--keep", type=Path, default=None, help="build (or reuse) the ledger in this directory")
    args = parser.parse_args(argv)
    total = args.rows or (20_000 if args.quick else 1_000_000)
    with tempfile.TemporaryDirectory(prefix="ledger-list-bench-") as tmp:
        path = (args.keep or Path(tmp)) / f"list-{total}.sqlite3"
        if not path.exists():
            build(path, total)
        store = open_sqlite_store(
            path,
            redactor=bench_redactor(),
            clock=utc_now,
            settings=LedgerSettings(),
            redaction_version=RULESET_VERSION,
            create=False,
        )
        bare = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        baseline, baseline_wall = timed(lambda: bare.execute(_BASELINE).fetchall())
        middle = format_ts(T0 + datetime.timedelta(seconds=total // 4))
        window = (format_ts(T0 + datetime.timedelta(seconds=total // 8)), middle)
        filters: dict[str, dict[str, Any]] = {
            "all": {},
            "tool": {"tool": "get_raw_event"},
            "principal": {"principal": PRINCIPALS[3]},
            "status_error": {"status": "error"},
            "status_ok": {"status": "ok"},
            "until": {"until": middle},
            "since_until": {"since": window[0], "until": window[1]},
            "tool_principal_window": {"tool": "search_events", "principal": PRINCIPALS[1], "until": middle},
            "conversation": {"conversation": f"conv-{total // 100:07d}"[:12]},
            "in_flight": {"status": "in_flight"},
        }
        results = []
        for name, options in filters.items():
            ms, wall = timed(lambda: commands.list_calls(store, clock=utc_now, **options))
            results.append(
                row(
                    f"sqlite.ledger_list.{name}",
                    ms,
                    "ms cpu",
                    target=f"<= {TARGET_MS:g} ms",
                    meets_target=ms <= TARGET_MS,
                    baseline=baseline,
                    ratio=ms / baseline,
                    rows=total,
                    wall_ms=round(wall, 3),
                    baseline_wall_ms=round(baseline_wall, 3),
                )
            )
        store.close()
        bare.close()
    emit("ledger_list", results)


if __name__ == "__main__":
    main()
