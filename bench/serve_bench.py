"""Team server under load: a real `harness serve --http` on loopback over a populated store, driven by the
MCP SDK's client.

The store holds --events generated events (store_bench.generate: 2,000 actors, 6 types, a year) and the
baseline built from them, made by the real commands; --workspace DIR keeps it there and reuses it on the
next run (it is rebuilt when its event count differs). Figures, each beside a baseline measured in the
same run against the same server:
- search_events (actor+type) p99 while 64 github_actor calls wait on a stalled upstream (a loopback
  listener that accepts and never answers the TLS handshake), beside search_events p99 on the idle server;
- the server's peak RSS while 64 clients read at once, beside the same server with 1 client;
- check_baseline calls/s with 16 clients, beside the server's ping rate with 16 clients;
- check_baseline calls/s with 64 clients, beside the best check_baseline rate of any client count;
- the CPU per check_baseline call with 16 clients (server plus clients), beside the CPU per ping in the ping
  runs: once the cores are busy, calls/s is cores / CPU per call, so their ratio bounds the calls/s ratio above.
Rates are the median of --repeats runs. Pass --quick for the smoke variant (a small store, fewer calls and
clients; what the test suite runs).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import httpx2
from _common import emit, median, percentile, row
from investigate_bench import harness, populate, quiet_env
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPDeprecationWarning
from store_bench import ACTORS, TYPES, generate

from harness.store.baseline import build

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
EVENTS_MARKER = ".serve-bench-events"
# Events the check_baseline baseline is built from (see append_baseline).
BASELINE_EVENTS = 50_000


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class StalledUpstream:
    """Accepts connections and never sends a byte, so every TLS handshake waits for the client's deadline."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(256)
        self.port = self.sock.getsockname()[1]
        self.held: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.held.append(conn)


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


class RssSampler:
    def __init__(self, pid: int) -> None:
        self.pid, self.peak, self._stop = pid, 0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, _rss_kib(self.pid))
            time.sleep(0.02)

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _cpu_s(pid: int) -> float:
    """User plus system CPU seconds of process `pid` so far (/proc/PID/stat), every thread counted."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _client(url: str) -> Client:
    return Client(streamable_http_client(url, http_client=httpx2.AsyncClient(timeout=120)), mode="legacy")


def _queries(seed: int, count: int) -> list[dict[str, str]]:
    """actor+type filters over actors and types the generated store holds."""
    rng = random.Random(seed)
    return [{"actor": f"actor-{rng.randrange(ACTORS):04d}", "type": rng.choice(TYPES)} for _ in range(count)]


def _checked(result: Any, tool: str) -> None:
    if result.is_error:
        raise RuntimeError(f"{tool} failed: {result.content[0].text}")


async def _search_latencies(url: str, calls: int, seed: int = 1) -> list[float]:
    out: list[float] = []
    async with _client(url) as client:
        for query in _queries(seed, calls):
            start = time.perf_counter()
            result = await client.call_tool("search_events", query)
            out.append((time.perf_counter() - start) * 1000)
            _checked(result, "search_events")
    return out


async def _many_readers(url: str, clients: int, calls: int) -> None:
    async with anyio.create_task_group() as tg:
        for n in range(clients):
            tg.start_soon(_search_latencies, url, calls, n)


async def _stalled_lookups(url: str, count: int, started: anyio.Event) -> None:
    """`count` clients, each calling github_actor against the stalled upstream again and again until cancelled."""

    async def one(n: int) -> None:
        async with _client(url) as client:
            opened[0] += 1
            if opened[0] == count:
                started.set()
            while True:
                await client.call_tool("github_actor", {"login": f"stalled-{n}"})

    opened = [0]
    async with anyio.create_task_group() as tg:
        for n in range(count):
            tg.start_soon(one, n)


async def _stall_until_killed(url: str, count: int) -> None:
    """The stalled lookups, in a process of their own; prints "ready" once every client has its session."""
    started = anyio.Event()
    async with anyio.create_task_group() as tg:
        tg.start_soon(_stalled_lookups, url, count, started)
        await started.wait()
        print("ready", flush=True)


def _search_beside_stall(url: str, stalled: int, calls: int) -> list[float]:
    """search_events latencies while `stalled` github_actor clients wait on the stalled upstream. Those clients
    run in another process, so the measuring client's event loop is not shared with them."""
    code = f"import sys; sys.path.insert(0, {str(HERE)!r}); import anyio, serve_bench; " \
           f"anyio.run(serve_bench._stall_until_killed, {url!r}, {stalled})"
    stall = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=quiet_env())
    try:
        if stall.stdout is None or stall.stdout.readline().strip() != "ready":
            raise RuntimeError("the stalled github_actor clients did not start")
        time.sleep(0.5)  # the lookups are now inside their handshakes
        return anyio.run(_search_latencies, url, calls)
    finally:
        stall.kill()
        stall.wait()


async def _rate(url: str, pid: int, clients: int, seconds: float, make_call: Callable[[Client, int], Awaitable[None]]
                ) -> tuple[float, float, float]:
    """(completed calls per second, server CPU ms per call, client CPU ms per call) of `clients` open sessions,
    each calling back to back for `seconds`: the server process's CPU and this process's (the clients') over the
    same interval."""
    async with AsyncExitStack() as stack:
        sessions = [await stack.enter_async_context(_client(url)) for _ in range(clients)]
        for n, session in enumerate(sessions):
            await make_call(session, n)  # warm: every session has answered once before the clock starts
        done = [0] * clients
        cpu_before, client_before = _cpu_s(pid), time.process_time()
        started = time.perf_counter()
        deadline = started + seconds

        async def loop(n: int, session: Client) -> None:
            while time.perf_counter() < deadline:
                await make_call(session, n + done[n])
                done[n] += 1

        async with anyio.create_task_group() as tg:
            for n, session in enumerate(sessions):
                tg.start_soon(loop, n, session)
        elapsed, calls = time.perf_counter() - started, max(sum(done), 1)
        server, client = _cpu_s(pid) - cpu_before, time.process_time() - client_before
        return sum(done) / elapsed, server * 1000 / calls, client * 1000 / calls


async def _check_baseline(client: Client, n: int) -> None:
    result = await client.call_tool("check_baseline", {"entity": f"actor-{n % ACTORS:04d}", "event_type": "login"})
    _checked(result, "check_baseline")


async def _ping(client: Client, n: int) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)  # these clients speak the 2025 protocol (legacy)
        await client.send_ping()


def _throughput(url: str, pid: int, counts: tuple[int, ...], ping_clients: int, seconds: float, repeats: int
                ) -> tuple[dict[str, float], dict[str, tuple[float, float]]]:
    """Median calls/s of check_baseline at each client count and of ping at `ping_clients` clients, and the
    median (server, client) CPU ms per call of each of those runs."""
    runs: dict[str, list[tuple[float, float, float]]] = {}
    for _ in range(repeats):
        for clients in counts:
            runs.setdefault(f"check_baseline_{clients}", []).append(
                anyio.run(_rate, url, pid, clients, seconds, _check_baseline))
        runs.setdefault(f"ping_{ping_clients}", []).append(anyio.run(_rate, url, pid, ping_clients, seconds, _ping))
    rates = {name: median([rate for rate, _, _ in values]) for name, values in runs.items()}
    cpu = {name: (median([v[1] for v in values]), median([v[2] for v in values])) for name, values in runs.items()}
    return rates, cpu


def _workspace(path: Path, events: int, upstream_port: int) -> None:
    """Populate `path` unless it already holds `events` events from an earlier run; then point it at the
    stalled upstream with limits high enough that the bench's one loopback caller is never refused."""
    marker = path / EVENTS_MARKER
    if not (marker.exists() and marker.read_text() == str(events)):
        if path.exists() and any(path.iterdir()):
            raise SystemExit(f"{path} exists and is not a serve-bench workspace of {events} events")
        populate(path, events, baseline=False)
        append_baseline(path, min(events, BASELINE_EVENTS))
        marker.write_text(str(events))
    (path / "harness.toml").write_text(
        f'[github]\napi_url = "https://127.0.0.1:{upstream_port}"\n\n'
        "[serve]\nmax_sessions_per_caller = 1000\nsession_burst = 1000\nsessions_per_minute = 10000\n"
        "burst = 10000\nrate_per_minute = 100000\nmax_concurrent_calls = 256\n"
    )


def append_baseline(workspace: Path, events: int) -> None:
    """Append the baseline of the store's first `events` events (the generator is seeded, so they are the same
    events): `harness baseline build` over a whole large generated store makes a record over the store's line
    cap (one relationship per actor and target), so the bench builds it from a prefix, with every actor in it."""
    sample = workspace.parent / f"{workspace.name}.baseline-sample.jsonl"
    generate(sample, events)
    with sample.open() as lines:
        record, _ = build((json.loads(line) for line in lines), "")
    sample.write_text(json.dumps(record))
    harness(workspace, "ingest", "baseline", str(sample))
    sample.unlink()


def _serve(workspace: Path, port: int, log: Path) -> subprocess.Popen[bytes]:
    """The server, its output in `log` (a file: a pipe nobody reads while the bench runs could fill and stall it)."""
    argv = [sys.executable, "-c", "from harness.cli import main; main()", "--workspace", str(workspace),
            "serve", "--http", f"127.0.0.1:{port}"]
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT, env=quiet_env())
    deadline = time.monotonic() + 180  # a loaded 2-core machine has taken over 60 s to start it
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                proc.wait()
                raise RuntimeError(f"server did not start: {log.read_text()}") from None
            time.sleep(0.05)


def measure(workspace: Path, args: argparse.Namespace, log: Path) -> list[dict[str, Any]]:
    quick = args.quick
    calls, clients, stalled = (20, 8, 8) if quick else (300, 64, 64)
    counts = (1, 4, 8) if quick else (1, 4, 16, 64)
    mid, top = (4, 8) if quick else (16, 64)
    seconds, repeats = (0.5, 1) if quick else (args.seconds, args.repeats)
    port = _free_port()
    proc = _serve(workspace, port, log)
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        anyio.run(_search_latencies, url, 3)  # opens the read index and warms the server
        idle = anyio.run(_search_latencies, url, calls)
        with RssSampler(proc.pid) as one:
            anyio.run(_many_readers, url, 1, calls)
        with RssSampler(proc.pid) as many:
            anyio.run(_many_readers, url, clients, max(5, calls // 10))
        beside = _search_beside_stall(url, stalled, calls)
        rates, cpu_ms = _throughput(url, proc.pid, counts, mid, seconds, repeats)
    except BaseException:
        print(f"server output:\n{log.read_text()[-4000:]}", file=sys.stderr)
        raise
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    idle_p99, stall_p99 = percentile(idle, 99), percentile(beside, 99)
    at_mid, at_top, ping = rates[f"check_baseline_{mid}"], rates[f"check_baseline_{top}"], rates[f"ping_{mid}"]
    (call_server, call_client), (ping_server, ping_client) = cpu_ms[f"check_baseline_{mid}"], cpu_ms[f"ping_{mid}"]
    cpu_call, cpu_ping = call_server + call_client, ping_server + ping_client
    best = max(value for name, value in rates.items() if name.startswith("check_baseline_"))
    return [
        row(f"search_events_p99_beside_{stalled}_stalled_github_actor", stall_p99, "ms", target="< 100 ms",
            meets_target=stall_p99 < 100, baseline=idle_p99, ratio=stall_p99 / idle_p99 if idle_p99 else None,
            p50_ms=round(percentile(beside, 50), 3), baseline_p50_ms=round(percentile(idle, 50), 3)),
        row(f"server_peak_rss_{clients}_clients", many.peak / 1024, "MiB", target="< 400 MiB",
            meets_target=many.peak / 1024 < 400, baseline=one.peak / 1024, ratio=many.peak / one.peak),
        row(f"check_baseline_calls_per_s_{mid}_clients", at_mid, "calls/s", target=f">= 0.8x ping at {mid} clients",
            meets_target=at_mid >= 0.8 * ping, baseline=ping, ratio=at_mid / ping),
        row(f"check_baseline_calls_per_s_{top}_clients", at_top, "calls/s",
            target=">= 0.9x the best rate of any client count", meets_target=at_top >= 0.9 * best, baseline=best,
            ratio=at_top / best, rates={name: round(value, 1) for name, value in sorted(rates.items())}),
        # Server and clients share this machine's cores: once they are busy, calls/s is at most cores / (CPU per
        # call), so the ping's CPU over the call's is the most goal 4's rate ratio can reach here.
        row(f"cpu_per_check_baseline_call_{mid}_clients", cpu_call, "ms",
            target=f"ping CPU / call CPU >= 0.8 (the rate ratio goal 4 needs at {mid} clients)",
            meets_target=cpu_ping / cpu_call >= 0.8, baseline=cpu_ping, ratio=cpu_call / cpu_ping,
            server_ms=round(call_server, 3), client_ms=round(call_client, 3),
            ping_server_ms=round(ping_server, 3), ping_client_ms=round(ping_client, 3),
            # The rate ratio a server costing no CPU at all would reach beside these clients.
            ratio_bound_server_free=round(cpu_ping / call_client, 3)),
    ]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small store and few clients, for a smoke run")
    parser.add_argument("--events", type=int, default=1_000_000, help="events in the generated store")
    parser.add_argument("--workspace", type=Path, help="keep the generated workspace here and reuse it")
    parser.add_argument("--seconds", type=float, default=4.0, help="length of each throughput run")
    parser.add_argument("--repeats", type=int, default=3, help="throughput runs per figure (the median is kept)")
    args = parser.parse_args()
    events = 3000 if args.quick else args.events
    upstream = StalledUpstream()
    with tempfile.TemporaryDirectory(prefix="serve-bench-") as tmp:
        workspace = args.workspace.resolve() if args.workspace else Path(tmp) / "W"
        _workspace(workspace, events, upstream.port)
        results = measure(workspace, args, Path(tmp) / "server.log")
    emit("serve", results, events=events)


if __name__ == "__main__":
    main()
