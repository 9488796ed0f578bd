"""Investigation benchmarks (docs/investigate.md §10) not covered by store_bench.py: search_events through the real
handler vs a full replay, `harness --help` cold start, and an MCP stdio round trip of check_baseline.

Usage: python bench/investigate_bench.py [--quick] [--events N]. Prints one JSON object on stdout:
{"bench", "machine", "results": [{"name", "value", "unit", "target", "meets_target", "baseline", "ratio"}]}.
Every figure is compared with a baseline measured in the same run, because these machines are noisy.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
from _common import emit, median, percentile, row
from store_bench import ACTORS, TYPES, full_replay, generate

QUERY_CALLS = 50
COLD_STARTS = 10
ROUND_TRIPS = 200


def harness_command() -> list[str]:
    """The installed `harness` entry point beside this interpreter (what an operator runs)."""
    script = Path(sys.executable).parent / "harness"
    return [str(script)] if script.exists() else [sys.executable, "-c", "from harness.cli import main; main()"]


def quiet_env() -> dict[str, str]:
    """This environment without harness variables, so the workspace flag alone decides."""
    return {k: v for k, v in os.environ.items() if not k.startswith("HARNESS_")}


def harness(workspace: Path, *args: str) -> None:
    """One `harness --workspace W ARGS` process; a failure stops the bench."""
    done = subprocess.run(
        [*harness_command(), "--workspace", str(workspace), *args],
        capture_output=True,
        text=True,
        env=quiet_env(),
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"harness {' '.join(args)} failed: {done.stdout}{done.stderr}")


def prepare(root: Path, events: int) -> Path:
    """A workspace holding `events` generated events and a baseline built from them, by the real commands."""
    workspace = root / "W"
    populate(workspace, events)
    return workspace


def populate(workspace: Path, events: int, *, baseline: bool = True) -> None:
    """Create `workspace` with `events` generated events (store_bench.generate) and, unless told not to, a
    baseline built from them."""
    workspace.parent.mkdir(parents=True, exist_ok=True)
    events_file = workspace.parent / f"{workspace.name}.events.jsonl"
    generate(events_file, events)
    harness(workspace, "init", "--empty")
    harness(workspace, "ingest", "events", str(events_file))
    if baseline:
        harness(workspace, "baseline", "build")
    events_file.unlink()


def query_figures(workspace: Path) -> list[dict[str, Any]]:
    """Median of actor+type search_events calls through dispatch (validation, handler, serialization)."""
    from harness.config import Overrides, load_settings
    from harness.context import build_context
    from harness.dispatch import CallContext, dispatch
    from harness.investigate.services import store
    from harness.surface import OPERATIONS

    ctx = build_context(load_settings(Overrides(workspace=workspace)))
    call = CallContext("cli", "bench", "flag", "bench-request", "bench-call")
    rng = random.Random(11)
    pairs = [(f"actor-{rng.randrange(ACTORS):04d}", rng.choice(TYPES)) for _ in range(QUERY_CALLS)]

    def search(actor: str, type_: str) -> dict[str, Any]:
        outcome = dispatch(OPERATIONS, "search_events", {"actor": actor, "type": type_}, call, ctx)
        if outcome.is_error:
            raise SystemExit(f"search_events failed: {outcome.text}")
        return outcome.document

    first = search(*pairs[0])
    timings = []
    for actor, type_ in pairs:
        started = time.perf_counter()
        search(actor, type_)
        timings.append((time.perf_counter() - started) * 1000)
    query_ms = median(timings)

    git = store(ctx).git()
    assert git is not None
    head = git.head_commit()
    replays = []
    for _ in range(3):
        started = time.perf_counter()
        matched = full_replay(git, head, *pairs[0])
        replays.append((time.perf_counter() - started) * 1000)
    if matched != first["total"]:
        raise SystemExit(f"search_events total {first['total']} differs from the replay's {matched}")
    replay_ms = median(replays)
    ctx.close()
    speedup = replay_ms / query_ms
    return [
        row("search_events_actor_type_median", query_ms, "ms", target="<= 50 ms at 1,000,000 events",
            meets_target=query_ms <= 50, baseline=replay_ms, ratio=query_ms / replay_ms),
        row("search_events_speedup_vs_full_replay", speedup, "x", target=">= 50x",
            meets_target=speedup >= 50, baseline=replay_ms, ratio=speedup),
    ]  # fmt: skip


def _wall(argv: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=quiet_env(), check=True)
    return time.perf_counter() - started


def cold_start_figures(workspace: Path) -> list[dict[str, Any]]:
    """Median wall time of fresh `harness --help` processes vs fresh `python -c pass` ones."""
    help_s = median([_wall([*harness_command(), "--help"]) for _ in range(COLD_STARTS)])
    python_s = median([_wall([sys.executable, "-c", "pass"]) for _ in range(COLD_STARTS)])
    return [
        row("cli_help_cold_start_median", help_s, "s", target="<= 0.3 s", meets_target=help_s <= 0.3,
            baseline=python_s, ratio=help_s / python_s),
    ]  # fmt: skip


async def _round_trips(workspace: Path) -> tuple[list[float], list[float]]:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    command = harness_command()
    params = StdioServerParameters(
        command=command[0], args=[*command[1:], "--workspace", str(workspace), "serve"], env=quiet_env()
    )
    rng = random.Random(5)
    entities = [f"actor-{rng.randrange(ACTORS):04d}" for _ in range(ROUND_TRIPS)]
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        warm = await session.call_tool("check_baseline", {"entity": entities[0]})
        if warm.is_error:
            raise SystemExit(f"check_baseline failed: {warm.content}")
        await session.send_ping()
        calls, pings = [], []
        for entity in entities:
            started = time.perf_counter()
            await session.call_tool("check_baseline", {"entity": entity, "event_type": "login"})
            calls.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            await session.send_ping()
            pings.append((time.perf_counter() - started) * 1000)
    return calls, pings


def round_trip_figures(workspace: Path) -> list[dict[str, Any]]:
    """p50 of check_baseline over one open stdio session vs p50 of the protocol-level ping."""
    calls, pings = anyio.run(_round_trips, workspace)
    call_ms, ping_ms = percentile(calls, 50), percentile(pings, 50)
    return [
        row("mcp_stdio_check_baseline_p50", call_ms, "ms", target="<= 2x ping (issue 11)",
            meets_target=call_ms <= 2 * ping_ms, baseline=ping_ms, ratio=call_ms / ping_ms),
    ]  # fmt: skip


FIGURES: dict[str, Callable[[Path], list[dict[str, Any]]]] = {
    "query": query_figures,
    "cold_start": cold_start_figures,
    "round_trip": round_trip_figures,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tiny store, for a seconds-long smoke run")
    parser.add_argument("--events", type=int, default=1_000_000, help="events in the generated store")
    parser.add_argument("--only", choices=sorted(FIGURES), action="append", help="measure only these figures")
    args = parser.parse_args()
    events = 3000 if args.quick else args.events
    with tempfile.TemporaryDirectory(prefix="investigate-bench-") as tmp:
        workspace = prepare(Path(tmp), events)
        results = [figure for name in args.only or FIGURES for figure in FIGURES[name](workspace)]
    emit("investigate", results)


if __name__ == "__main__":
    main()
