"""Store benchmarks (docs/investigate.md §10): ingest, actor+type query vs full replay, catch-up, append scaling.

The ingest figures are issue 11 goal 6's: wall and peak RSS of a 1,000,000-event ingest, beside reading and
json-parsing the same file in a process of its own in the same run (the least any ingest does), and the CPU
SQLite takes to build the schema's order indexes alone over the same rows (the least any ingest that keeps them
does); with `--scale-events 10000000`, the same for a 10,000,000-event store and its actor+type p50 against the
1M one.

Usage: python bench/store_bench.py [--quick] [--events N] [--scale-events N]. Prints one JSON object on stdout:
{"bench", "machine", "results": [{"name", "value", "unit", "target", "meets_target", "baseline", "ratio"}]}.
Ratios compare figures measured in the same run, because these machines are noisy.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from harness.store import RecordFilter, Store
from harness.store.git import Git, git_executable
from harness.store.index_bulk import order_indexes
from harness.store.index_schema import FILTER_COLUMNS, table_name
from harness.store.ingest import ingest_files
from harness.store.reader import list_segments

ACTORS = 2000
TYPES = ("login", "push", "container_restart", "role_assignment", "image_push", "delete")
SOURCES = ("azure", "github", "aws")
YEAR_START = 1_767_225_600  # 2026-01-01T00:00:00Z
YEAR_SECONDS = 365 * 86_400
QUERY_CALLS = 50
# The page of every actor+type query. Each pair matches about 83 events at 1,000,000 and 830 at 10,000,000, so a
# page of 50 is full at both sizes and goal 6's two p50s compare the same work; a page of 200 would return 83 rows
# from one store and 200 from the other (docs/decisions.md, "The floor beside each unmet issue 11 goal").
PAGE_LIMIT = 50
APPEND_CALLS = 7


def generate(path: Path, count: int, *, seed: int = 7, prefix: str = "evt") -> None:
    """One JSON Lines file of `count` events: 2,000 actors, 6 types, 3 sources, a year of timestamps,
    payloads of about 150 bytes (action, target, metadata with ip and operation_count)."""
    rng = random.Random(seed)
    with path.open("w") as out:
        for n in range(count):
            stamp = time.gmtime(YEAR_START + rng.randrange(YEAR_SECONDS))
            event = {
                "id": f"{prefix}-{n:08d}",
                "source": SOURCES[n % 3],
                "type": TYPES[rng.randrange(6)],
                "actor": f"actor-{rng.randrange(ACTORS):04d}",
                "timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", stamp),
                "payload": {
                    "action": rng.choice(("restart", "deploy", "read", "write", "grant")),
                    "target": f"resource-{rng.randrange(100_000):06d}.prod.example.internal",
                    "metadata": {
                        "ip": f"203.0.{rng.randrange(256)}.{rng.randrange(256)}",
                        "operation_count": rng.randrange(10_000),
                        "user_agent": "bench-client/1.0",
                    },
                },
            }
            out.write(json.dumps(event, separators=(",", ":")) + "\n")


def _child(args: list[str]) -> tuple[float, int, float]:
    """Run this script in a child process; return (wall seconds, peak RSS in KiB, CPU seconds) of that child
    (the CPU time counts the git processes it waited for)."""
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, __file__, *args], stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"child {args[0]} failed with status {status}")
    return wall, usage.ru_maxrss, usage.ru_utime + usage.ru_stime


def child_parse(events_file: str) -> None:
    """The baseline: read the file line by line and json.loads every line, nothing else."""
    with open(events_file, "rb") as lines:
        for line in lines:
            json.loads(line)


def child_ingest(store_path: str, index_path: str, events_file: str) -> None:
    """What `harness ingest events FILE` runs: one process, index left current."""
    ingest_files(Store(Path(store_path), index_path=Path(index_path)), "events", [events_file], stderr=sys.stderr)


def full_replay(git: Git, commit: str, actor: str, type_: str) -> int:
    """The fastest honest replay: every event line at HEAD, plain json.loads, filter in Python."""
    segments = list_segments(git, commit, ["events"])["events"]
    matched = 0
    actor, type_ = actor.lower(), type_.lower()
    with git.blobs() as blobs:
        for segment in segments:
            for line in blobs.read(segment.blob).split(b"\n"):
                if line:
                    record = json.loads(line)
                    if record["actor"].lower() == actor and record["type"].lower() == type_:
                        matched += 1
    return matched


def _timed(call: Callable[[], Any]) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


def _query(store: Store, actor: str, type_: str) -> int:
    with store.snapshot() as view:
        return len(view.select("events", RecordFilter(actor=actor, type=type_), PAGE_LIMIT).records)


def _append_one(store: Store, counter: Iterator[int]) -> float:
    event = {"id": f"one-{next(counter)}", "actor": "actor-0001", "timestamp": "2026-06-01T00:00:00Z"}
    return _timed(lambda: store.append_batch("events", [event]))


def result(name: str, value: float, unit: str, target: str, meets: bool,
           baseline: float | None = None, ratio: float | None = None) -> dict[str, Any]:
    return {"name": name, "value": round(value, 4), "unit": unit, "target": target, "meets_target": meets,
            "baseline": None if baseline is None else round(baseline, 4),
            "ratio": None if ratio is None else round(ratio, 3)}


def _ingest_figures(store_path: Path, index_path: Path, events_file: Path, events: int, suffix: str
                    ) -> list[dict[str, Any]]:
    """Goal 6's ingest rows: wall, CPU and peak RSS of one ingest child, beside a json-parse child of the same file."""
    parse_wall, _, parse_cpu = _child(["--child-parse", str(events_file)])
    wall, rss_kib, cpu = _child(["--child-ingest", str(store_path), str(index_path), str(events_file)])
    limit_s = 30 * events / 1_000_000
    rss_mib = rss_kib / 1024
    at = f"at {events:,} events (issue 11 goal 6)"
    return [
        result(f"ingest_wall{suffix}", wall, "s", f"<= {limit_s:g} s {at}", wall <= limit_s,
               baseline=parse_wall, ratio=wall / parse_wall),
        result(f"ingest_cpu{suffix}", cpu, "s", "CPU of the ingest and its git processes, beside the json-parse child",
               True, baseline=parse_cpu, ratio=cpu / parse_cpu),
        result(f"ingest_peak_rss{suffix}", rss_mib, "MiB", f"<= 512 MiB {at}", rss_mib <= 512),
    ]


def order_index_floor(index_path: Path, work: Path) -> float:
    """CPU seconds SQLite takes to build the events table's order indexes, as the schema declares them, over the
    ingested rows at their smallest: the filter columns as integers (one per distinct value), no line, no journal,
    no id index. No ingest that keeps those indexes can take less (docs/decisions.md, "Ingest speed")."""
    table, columns = table_name("events"), FILTER_COLUMNS["events"]
    floor = work / "order-index-floor.sqlite3"
    conn = sqlite3.connect(floor)
    try:
        conn.execute("PRAGMA journal_mode = OFF")
        conn.execute("ATTACH DATABASE ? AS ingested", (f"file:{index_path}?mode=ro",))
        conn.execute("CREATE TEMP TABLE dictionary (value TEXT PRIMARY KEY, code INTEGER NOT NULL)")
        for column in columns:
            conn.execute(f"INSERT OR IGNORE INTO dictionary SELECT DISTINCT {column}, NULL FROM ingested.{table}")
        conn.execute("UPDATE dictionary SET code = rowid")
        coded = ", ".join(f"(SELECT code FROM dictionary WHERE value = r.{column})" for column in columns)
        conn.execute(f"CREATE TABLE {table} (seq INTEGER PRIMARY KEY, {', '.join(f'{c} INTEGER' for c in columns)},"
                     " ts INTEGER NOT NULL)")
        conn.execute(f"INSERT INTO {table} SELECT r.seq, {coded}, r.ts FROM ingested.{table} AS r")
        conn.commit()
        conn.execute("DETACH DATABASE ingested")
        started = time.process_time()
        for _, statement in order_indexes(table):
            conn.execute(statement)
        conn.commit()
        return time.process_time() - started
    finally:
        conn.close()
        floor.unlink(missing_ok=True)


def _p50(store: Store, pairs: list[tuple[str, str]]) -> tuple[float, float]:
    """(p50 in ms of the actor+type query over `pairs`, KiB read from storage per call while timing them)."""
    _query(store, *pairs[0])
    before = _storage_bytes("read_bytes")
    p50 = statistics.median(_timed(lambda p=pair: _query(store, *p)) for pair in pairs) * 1000
    return p50, (_storage_bytes("read_bytes") - before) / len(pairs) / 1024


def scale(events: int, small_p50: float, pairs: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """Goal 6 at scale: the ingest rows of an `events`-event store and its p50 against the smaller store's."""
    with tempfile.TemporaryDirectory(prefix="store-bench-scale-") as tmp:
        root = Path(tmp)
        events_file = root / "events.jsonl"
        generate(events_file, events)
        store_path, index_path = root / "store", root / "store.index.sqlite3"
        rows = _ingest_figures(store_path, index_path, events_file, events, "_scale")
        events_file.unlink()
        big = Store(store_path, index_path=index_path)
        (first, first_kib), (p50, again_kib) = _p50(big, pairs), _p50(big, pairs)
    # Goal 6's figure is the warm one, as the smaller store's is: the smaller store's pages are all cached after its
    # ingest, while the larger one's first pass reads what its ingest pushed out of the page cache, and the bytes
    # read per call tell the two passes apart.
    rows.append(result("query_actor_type_p50_scale", p50, "ms", "<= 1.5x the p50 of the smaller store, both warm",
                       p50 <= 1.5 * small_p50, baseline=small_p50, ratio=p50 / small_p50))
    rows.append(result("query_actor_type_p50_scale_first_touch", first, "ms", "the first pass over the same pairs,"
                       " beside the warm p50", True, baseline=p50, ratio=first / p50))
    rows.append(result("query_storage_read_kib_per_call_scale", first_kib, "KiB", "bytes read from storage per call,"
                       " first pass, beside the warm pass", True, baseline=again_kib))
    return rows


def _storage_bytes(field: str) -> int:
    """`read_bytes` or `write_bytes` of /proc/self/io: what this process has caused to be read from storage (not
    from the page cache) or sent to it, or 0 where the kernel does not say."""
    try:
        text = Path("/proc/self/io").read_text()
    except OSError:
        return 0
    return next((int(line.split()[1]) for line in text.splitlines() if line.startswith(f"{field}:")), 0)


def _rewrite_once(source: Path, copy: Path) -> float:
    """Seconds to write every page of `source` once, to a copy made durable: the least a catch-up that changes
    most of the index's pages in place can cost (docs/decisions.md, "The floor beside each unmet issue 11 goal")."""
    started = time.perf_counter()
    shutil.copyfile(source, copy)
    descriptor = os.open(copy, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
    elapsed = time.perf_counter() - started
    copy.unlink()
    return elapsed


def run(events: int, catch_up: int, small: int, scale_events: int) -> list[dict[str, Any]]:
    results = []
    with tempfile.TemporaryDirectory(prefix="store-bench-") as tmp:
        root = Path(tmp)
        events_file = root / "events.jsonl"
        generate(events_file, events)
        store_path, index_path = root / "store", root / "store.index.sqlite3"

        results += _ingest_figures(store_path, index_path, events_file, events, "")
        floor_s = order_index_floor(index_path, root)
        limit_s = 30 * events / 1_000_000
        results.append(result("order_index_build_floor", floor_s, "s",
                              f"<= {limit_s:g} s, goal 6's whole ingest at {events:,} events", floor_s <= limit_s,
                              baseline=results[1]["value"], ratio=floor_s / results[1]["value"]))

        store = Store(store_path, index_path=index_path)
        git = store.git()
        assert git is not None
        rng = random.Random(11)
        pairs = [(f"actor-{rng.randrange(ACTORS):04d}", rng.choice(TYPES)) for _ in range(QUERY_CALLS)]
        p50, read_kib = _p50(store, pairs)
        replay_ms = _timed(lambda: full_replay(git, git.head_commit(), *pairs[0])) * 1000
        results.append(result("query_actor_type_p50", p50, "ms", "<= 50 ms at 1,000,000 events", p50 <= 50,
                              baseline=replay_ms, ratio=replay_ms / p50))
        results.append(result("query_speedup_vs_full_replay", replay_ms / p50, "x", ">= 50x", replay_ms / p50 >= 50,
                              baseline=replay_ms, ratio=replay_ms / p50))
        results.append(result("query_storage_read_kib_per_call", read_kib, "KiB", "bytes read from storage per call"
                              " (0: the store's pages are cached, a warm p50)", True))

        more = root / "more.jsonl"
        generate(more, catch_up, seed=8, prefix="more")
        elsewhere = root / "elsewhere.sqlite3"
        _child(["--child-ingest", str(store_path), str(elsewhere), str(more)])
        # The other process's own index is not the catch-up's work: gone, and its pages on disk, before the clock.
        for suffix in ("", "-wal", "-shm", ".lock"):
            Path(f"{elsewhere}{suffix}").unlink(missing_ok=True)
        os.sync()
        written = _storage_bytes("write_bytes")
        catch_up_s = _timed(lambda: _query(store, *pairs[1]))
        written_mib = (_storage_bytes("write_bytes") - written) / 2**20
        rewrite_s = _rewrite_once(index_path, root / "rewritten.sqlite3")
        results.append(result(f"catch_up_after_{catch_up}", catch_up_s, "s", "<= 2 s after 10,000 events",
                              catch_up_s <= 2, baseline=rewrite_s, ratio=catch_up_s / rewrite_s))
        index_mib = index_path.stat().st_size / 2**20
        results.append(result("catch_up_written", written_mib, "MiB", "what the catch-up wrote (its WAL frames, then"
                              " the checkpoint), beside the size of the index file", True,
                              baseline=index_mib, ratio=written_mib / index_mib))

        small_file = root / "small.jsonl"
        generate(small_file, small, seed=9)
        small_store = Store(root / "small", index_path=root / "small.index.sqlite3")
        ingest_files(small_store, "events", [str(small_file)], stderr=io.StringIO())
        counter = iter(range(1_000_000))
        small_ms = statistics.median(_append_one(small_store, counter) for _ in range(APPEND_CALLS)) * 1000
        large_ms = statistics.median(_append_one(store, counter) for _ in range(APPEND_CALLS)) * 1000
        results.append(result(f"append_one_at_{events}", large_ms, "ms",
                              f"ratio to the append at {small} events <= 2", large_ms / small_ms <= 2,
                              baseline=small_ms, ratio=large_ms / small_ms))
    if scale_events:
        results += scale(scale_events, p50, pairs)
    return results


def machine() -> dict[str, Any]:
    version = subprocess.run([git_executable(), "version"], capture_output=True, text=True).stdout.strip()
    return {"platform": platform.platform(), "python": platform.python_version(), "cpus": os.cpu_count(),
            "git": version}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tiny store, for a smoke test")
    parser.add_argument("--events", type=int, default=1_000_000, help="events in the generated store")
    parser.add_argument("--scale-events", type=int, default=0,
                        help="also ingest a store of this many events (issue 11 goal 6: 10,000,000) and query it")
    parser.add_argument("--child-ingest", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--child-parse", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_ingest:
        child_ingest(*args.child_ingest)
        return
    if args.child_parse:
        child_parse(args.child_parse)
        return
    events = 3000 if args.quick else args.events
    catch_up = 300 if args.quick else 10_000
    small = 300 if args.quick else 10_000
    report = {"bench": "store", "machine": machine(), "results": run(events, catch_up, small, args.scale_events)}
    print(json.dumps(report, sort_keys=True))


if __name__ == "__main__":
    main()
