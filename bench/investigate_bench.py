"""Investigation benchmarks (docs/investigate.md §10) not covered by store_bench.py: search_events through the real
handler vs a full replay, `harness --help` cold start, MCP stdio round trips of check_baseline and search_events
vs ping (and the SDK's own floor: bench/_sdk_floor_server.py answering the same result of each), a
2,000-event result in process and time-window-only queries vs the bare SELECT of their page.

Usage: python bench/investigate_bench.py [--quick] [--events N] [--workspace W] [--only NAME]. Prints one JSON object on stdout:
{"bench", "machine", "results": [{"name", "value", "unit", "target", "meets_target", "baseline", "ratio"}]}.
Every figure is compared with a baseline measured in the same run, because these machines are noisy.
"""

from __future__ import annotations

import argparse
import json
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
from store_bench import ACTORS, TYPES, _timed, full_replay, generate

QUERY_CALLS = 50
COLD_STARTS = 10
ROUND_TRIPS = 200
SDK_FLOOR_SERVER = Path(__file__).resolve().parent / "_sdk_floor_server.py"
PAGE_CALLS = 10
REPEATS = 3


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


def _server(workspace: Path) -> Any:
    """The parameters of `harness serve` over stdio on `workspace`."""
    from mcp.client.stdio import StdioServerParameters

    command = harness_command()
    return StdioServerParameters(
        command=command[0], args=[*command[1:], "--workspace", str(workspace), "serve"], env=quiet_env()
    )


async def _round_trips(server: Any, tool: str, calls: list[dict[str, Any]]) -> tuple[list[float], list[float]]:
    """Times of `tool` with each of `calls` over one open stdio session, each followed by a protocol ping."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import stdio_client

    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        warm = await session.call_tool(tool, calls[0])
        if warm.is_error:
            raise SystemExit(f"{tool} failed: {warm.content}")
        await session.send_ping()
        timings, pings = [], []
        for arguments in calls:
            started = time.perf_counter()
            await session.call_tool(tool, arguments)
            timings.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            await session.send_ping()
            pings.append((time.perf_counter() - started) * 1000)
    return timings, pings


def _p50_ratio(server: Any, tool: str, calls: list[dict[str, Any]]) -> tuple[float, float, float]:
    """(call p50, ping p50, ratio) of the session whose ratio is the median of REPEATS sessions."""
    sessions = []
    for _ in range(REPEATS):
        timings, pings = anyio.run(_round_trips, server, tool, calls)
        call_ms, ping_ms = percentile(timings, 50), percentile(pings, 50)
        sessions.append((call_ms / ping_ms, call_ms, ping_ms))
    ratio, call_ms, ping_ms = sorted(sessions)[len(sessions) // 2]
    return call_ms, ping_ms, ratio


async def _tool_spec(server: Any, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """What the harness server lists for `tool` and answers to `arguments`: the SDK floor server's whole input."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import stdio_client

    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        listed = next(t for t in (await session.list_tools()).tools if t.name == tool)
        answer = await session.call_tool(tool, arguments)
    return {"tool": tool, "input_schema": listed.input_schema, "output_schema": listed.output_schema,
            "result": answer.structured_content}  # fmt: skip


def sdk_floor(server: Any, tool: str, calls: list[dict[str, Any]]) -> tuple[float, float, float]:
    """(call p50, ping p50, ratio) of the same calls against bench/_sdk_floor_server.py answering the harness's own
    result for the first of them with the harness's schemas: what any server on this SDK costs per call."""
    from mcp.client.stdio import StdioServerParameters

    spec = anyio.run(_tool_spec, server, tool, calls[0])
    with tempfile.TemporaryDirectory(prefix="sdk-floor-") as tmp:
        spec_file = Path(tmp) / "spec.json"
        spec_file.write_text(json.dumps(spec))
        floor = StdioServerParameters(command=sys.executable, args=[str(SDK_FLOOR_SERVER), str(spec_file)])
        return _p50_ratio(floor, tool, [calls[0]] * len(calls))


def round_trip_figures(workspace: Path) -> list[dict[str, Any]]:
    """p50 of check_baseline and of an actor+type search_events over one open stdio session vs p50 of the
    protocol-level ping in the same session (median of REPEATS sessions), and the SDK's own floor for each of the
    two results: a bare SDK server answering it, against the ping of its own sessions."""
    rng = random.Random(5)
    entities = [f"actor-{rng.randrange(ACTORS):04d}" for _ in range(ROUND_TRIPS)]
    check = [{"entity": entity, "event_type": "login"} for entity in entities]
    search = [{"actor": entity, "type": rng.choice(TYPES)} for entity in entities]
    server = _server(workspace)
    check_ms, check_ping, check_ratio = _p50_ratio(server, "check_baseline", check)
    search_ms, search_ping, search_ratio = _p50_ratio(server, "search_events", search)
    floor_ms, floor_ping, floor_ratio = sdk_floor(server, "check_baseline", check)
    search_floor_ms, search_floor_ping, search_floor_ratio = sdk_floor(server, "search_events", search)
    return [
        row("mcp_stdio_check_baseline_p50", check_ms, "ms", target="<= 2x ping (issue 11)",
            meets_target=check_ratio <= 2, baseline=check_ping, ratio=check_ratio),
        row("mcp_stdio_search_events_actor_type_p50", search_ms, "ms", target="<= 4x ping (issue 11)",
            meets_target=search_ratio <= 4, baseline=search_ping, ratio=search_ratio),
        row("mcp_stdio_sdk_floor_check_baseline_p50", floor_ms, "ms",
            target="<= 2x ping for the SDK alone: a bare SDK server answering the same result (the floor of goal 1)",
            meets_target=floor_ratio <= 2, baseline=floor_ping, ratio=floor_ratio),
        row("mcp_stdio_sdk_floor_search_events_actor_type_p50", search_floor_ms, "ms",
            target="<= 4x ping for the SDK alone: a bare SDK server answering the same result (the floor of goal 3)",
            meets_target=search_floor_ratio <= 4, baseline=search_floor_ping, ratio=search_floor_ratio),
    ]  # fmt: skip


def _bare_page_ms(index_path: Path, where: str, params: list[Any], limit: int) -> tuple[float, float]:
    """The floor of a page: the same SELECT of stored lines on the same order index, no count, nothing decoded; and
    the count of every match on the same covering index, which the result's exact total needs (SQLite's B-trees keep
    no counts, so it walks every matching entry: docs/decisions.md, "Queries on their indexes")."""
    from harness.store.index_backends import connect

    conn = connect(str(index_path))
    try:
        source = "r_events INDEXED BY r_events_by_time"
        page = f"SELECT line FROM {source} WHERE {where} ORDER BY ts, seq LIMIT ?"
        count = f"SELECT count(*) FROM {source} WHERE {where}"
        conn.execute(page, [*params, limit]).fetchall()
        page_ms = 1000 * median([_timed(lambda: conn.execute(page, [*params, limit]).fetchall())
                                 for _ in range(PAGE_CALLS)])
        count_ms = 1000 * median([_timed(lambda: conn.execute(count, params).fetchall()) for _ in range(PAGE_CALLS)])
        return page_ms, count_ms
    finally:
        conn.close()


def page_figures(workspace: Path) -> list[dict[str, Any]]:
    """A 2,000-event result in process (validation, index, views, serialization and the MCP boundary's known-secret
    filter, with one known secret configured) beside the bare SELECT of its 2,000 lines; time-window-only
    search_events over a day and over the whole year beside the bare SELECT of their pages. Each the median of
    REPEATS medians."""
    from harness.config import Overrides, load_settings
    from harness.context import build_context
    from harness.dispatch import CallContext, dispatch
    from harness.mcp_server import KnownSecretMiddleware, call_result
    from harness.surface import OPERATIONS
    from harness.text.rfc3339 import parse_bound

    environ = {**quiet_env(), "GITHUB_TOKEN": "ghp_" + "benchKnownSecretValue0123456789ab"}
    ctx = build_context(load_settings(Overrides(workspace=workspace), environ))
    call = CallContext("mcp", "bench", "flag", "bench-request", "bench-call", transport="stdio")
    boundary = KnownSecretMiddleware(ctx.redactor)

    async def served(arguments: dict[str, Any], times: int) -> tuple[float, dict[str, Any]]:
        """The median time of `times` calls through the MCP boundary's filter, one event loop for all, and the
        last result."""

        async def handler(_: Any) -> Any:
            return call_result(dispatch(OPERATIONS, "search_events", arguments, call, ctx))

        timings, result = [], {}
        for _ in range(times):
            started = time.perf_counter()
            result = await boundary(None, handler)
            timings.append((time.perf_counter() - started) * 1000)
        if result.get("isError"):
            raise SystemExit(f"search_events failed: {result}")
        return median(timings), result["structuredContent"]

    def figure(arguments: dict[str, Any]) -> tuple[float, float, float, int]:
        since = parse_bound(arguments.get("since", "1970-01-01"), "since")
        until = parse_bound(arguments.get("until", "9999-12-31"), "until")
        limit = arguments.get("limit", 200)
        _, first = anyio.run(served, arguments, 1)
        values = [anyio.run(served, arguments, PAGE_CALLS)[0] for _ in range(REPEATS)]
        bare = [_bare_page_ms(ctx.settings.index_path, "ts >= ? AND ts <= ?", [since, until], limit)
                for _ in range(REPEATS)]
        return median(values), median([b[0] for b in bare]), median([b[1] for b in bare]), int(first["total"])

    page_ms, page_bare, page_count, page_total = figure({"since": "2026-01-01", "until": "2026-12-31", "limit": 2000})
    day_ms, day_bare, day_count, day_total = figure({"since": "2026-03-01", "until": "2026-03-01"})
    year_ms, year_bare, year_count, year_total = figure({"since": "2026-01-01", "until": "2026-12-31"})
    ctx.close()
    return [
        row("search_events_2000_events_in_process", page_ms, "ms", target="<= 30 ms (issue 11)",
            meets_target=page_ms <= 30, baseline=page_bare, ratio=page_ms / page_bare, matched=page_total,
            count_ms=round(page_count, 3)),
        row("search_events_window_day", day_ms, "ms", target="<= 30 ms, no sort of the window (issue 11)",
            meets_target=day_ms <= 30, baseline=day_bare, ratio=day_ms / day_bare, matched=day_total,
            count_ms=round(day_count, 3)),
        row("search_events_window_year", year_ms, "ms", target="<= 30 ms, no sort of the window (issue 11)",
            meets_target=year_ms <= 30, baseline=year_bare, ratio=year_ms / year_bare, matched=year_total,
            count_ms=round(year_count, 3)),
    ]  # fmt: skip


FIGURES: dict[str, Callable[[Path], list[dict[str, Any]]]] = {
    "query": query_figures,
    "cold_start": cold_start_figures,
    "round_trip": round_trip_figures,
    "page": page_figures,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tiny store, for a seconds-long smoke run")
    parser.add_argument("--events", type=int, default=1_000_000, help="events in the generated store")
    parser.add_argument("--only", choices=sorted(FIGURES), action="append", help="measure only these figures")
    parser.add_argument("--workspace", type=Path, help="reuse (or generate and keep) the workspace here")
    args = parser.parse_args()
    events = 3000 if args.quick else args.events
    if args.quick:
        # A smoke run checks the figures are produced, not their values: one session or median each, few calls.
        global ROUND_TRIPS, PAGE_CALLS, REPEATS
        ROUND_TRIPS, PAGE_CALLS, REPEATS = 20, 3, 1
    names = args.only or FIGURES
    if args.workspace is not None:
        # A folder without a workspace would measure an empty store; generate it there instead, and keep it.
        if not (args.workspace / "harness.toml").exists():
            populate(args.workspace, events)
        emit("investigate", [figure for name in names for figure in FIGURES[name](args.workspace)])
        return
    with tempfile.TemporaryDirectory(prefix="investigate-bench-") as tmp:
        workspace = prepare(Path(tmp), events)
        results = [figure for name in names for figure in FIGURES[name](workspace)]
    emit("investigate", results)


if __name__ == "__main__":
    main()
