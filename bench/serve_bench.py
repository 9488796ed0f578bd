"""Team server under load: a real `harness serve --http` on loopback, driven by the MCP SDK's client.

Figures, each beside a baseline measured in the same run:
- search_events p99 while 64 github_actor calls wait on a stalled upstream (a loopback listener that
  accepts and never answers the TLS handshake), beside search_events p99 on the idle server;
- the server's peak RSS while 64 clients read at once, beside the same server with 1 client.
Pass --quick for the smoke variant (fewer calls and clients; what the test suite runs).
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import httpx2
from _common import emit, percentile, row
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

ROOT = Path(__file__).resolve().parents[1]


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


def _client(url: str) -> Client:
    return Client(streamable_http_client(url, http_client=httpx2.AsyncClient(timeout=120)), mode="legacy")


async def _search_latencies(url: str, calls: int) -> list[float]:
    out: list[float] = []
    async with _client(url) as client:
        for n in range(calls):
            start = time.perf_counter()
            result = await client.call_tool("search_events", {"actor": f"actor-{n % 7}"})
            out.append((time.perf_counter() - start) * 1000)
            if result.is_error:
                raise RuntimeError(f"search_events failed: {result.content[0].text}")
    return out


async def _many_readers(url: str, clients: int, calls: int) -> None:
    async with anyio.create_task_group() as tg:
        for _ in range(clients):
            tg.start_soon(_search_latencies, url, calls)


async def _stalled_lookups(url: str, count: int, started: anyio.Event) -> None:
    async def one(n: int) -> None:
        async with _client(url) as client:
            opened[0] += 1
            if opened[0] == count:
                started.set()
            await client.call_tool("github_actor", {"login": f"stalled-{n}"})

    opened = [0]
    async with anyio.create_task_group() as tg:
        for n in range(count):
            tg.start_soon(one, n)


async def _search_beside_stall(url: str, stalled: int, calls: int) -> list[float]:
    started = anyio.Event()
    async with anyio.create_task_group() as tg:
        tg.start_soon(_stalled_lookups, url, stalled, started)
        await started.wait()
        await anyio.sleep(0.5)  # the lookups are now inside their handshakes
        latencies = await _search_latencies(url, calls)
        tg.cancel_scope.cancel()
    return latencies


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    calls, clients, stalled = (20, 8, 8) if args.quick else (300, 64, 64)
    upstream = StalledUpstream()
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp)
        (workspace / "harness.toml").write_text(
            f'[github]\napi_url = "https://127.0.0.1:{upstream.port}"\n\n'
            "[serve]\nmax_sessions_per_caller = 1000\nsession_burst = 1000\nsessions_per_minute = 10000\n"
            "burst = 10000\nrate_per_minute = 100000\nmax_concurrent_calls = 256\n"
        )
        port = _free_port()
        argv = [sys.executable, "-c", "from harness.cli import main; main()", "--workspace", str(workspace),
                "serve", "--http", f"127.0.0.1:{port}"]
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=ROOT)
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                    break
                except OSError:
                    if time.monotonic() > deadline or proc.poll() is not None:
                        raise RuntimeError("server did not start") from None
                    time.sleep(0.05)
            url = f"http://127.0.0.1:{port}/mcp"
            anyio.run(_search_latencies, url, 3)  # builds the read index and warms the server
            idle = anyio.run(_search_latencies, url, calls)
            with RssSampler(proc.pid) as one:
                anyio.run(_many_readers, url, 1, calls)
            with RssSampler(proc.pid) as many:
                anyio.run(_many_readers, url, clients, max(5, calls // 10))
            beside = anyio.run(_search_beside_stall, url, stalled, calls)
        finally:
            proc.terminate()
            proc.communicate(timeout=20)
    idle_p99, stall_p99 = percentile(idle, 99), percentile(beside, 99)
    results: list[dict[str, Any]] = [
        row(f"search_events_p99_beside_{stalled}_stalled_github_actor", stall_p99, "ms", target="< 100 ms",
            meets_target=stall_p99 < 100, baseline=idle_p99, ratio=stall_p99 / idle_p99 if idle_p99 else None),
        row(f"server_peak_rss_{clients}_clients", many.peak / 1024, "MiB", target="< 400 MiB",
            meets_target=many.peak / 1024 < 400, baseline=one.peak / 1024, ratio=many.peak / one.peak),
    ]
    emit("serve", results)


if __name__ == "__main__":
    main()
