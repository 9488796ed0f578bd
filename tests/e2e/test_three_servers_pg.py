"""A team's deployment (issue 12; README "Moving the store to PostgreSQL"): three `harness serve --http` processes
and their operators' ingests sharing one PostgreSQL database for the store and the ledger.

Every process is a real subprocess on the app login the README describes. The ingests of all three environments
start together and overlap with tool calls on every server; afterwards nothing is lost or duplicated, the stream
order is the commit order with no gap, and every server answers the same queries with the same bytes.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import psycopg
import pytest
from mcp import Client
from pgsupport import PgServer, pg_server  # noqa: F401  (the shared session fixture)
from procs import clean_env, free_port, harness_argv, wait_for_port
from recording_support import make_pg_ledger

pytestmark = [pytest.mark.pg, pytest.mark.slow, pytest.mark.anyio, pytest.mark.timeout(600)]

SERVERS = 3
BATCHES = 3  # ingest processes per server's environment, all started at once
BATCH_EVENTS = 300
ACTORS = [f"dev-{n}" for n in range(5)]
TYPES = ["login", "push", "role_assignment"]


def _event(server: int, batch: int, n: int) -> dict[str, Any]:
    minute = (server * BATCHES + batch) * BATCH_EVENTS + n
    return {
        "id": f"s{server}-b{batch}-{n:04d}",
        "timestamp": f"2026-05-{1 + minute // 1440:02d}T{minute % 1440 // 60:02d}:{minute % 60:02d}:00Z",
        "source": ("github", "okta", "aws")[n % 3],
        "type": TYPES[n % len(TYPES)],
        "actor": ACTORS[(n + server) % len(ACTORS)],
        "payload": {"ip": f"198.51.100.{n % 250}", "geo": ("US", "DE", "JP")[server], "n": n},
    }


def _finding(server: int) -> dict[str, Any]:
    return {
        "id": f"f-s{server}",
        "source": "detector:new-actor",
        "severity": "medium",
        "type": "new-actor",
        "actor": ACTORS[server],
        "timestamp": "2026-05-03T00:00:00Z",
        "reason": f"first seen from server {server}'s feed",
        "event_ids": [f"s{server}-b0-0000", f"s{server}-b1-0001"],
    }


def _write_lines(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


QUERIES: list[tuple[str, dict[str, Any]]] = [
    ("search_events", {"limit": 50}),
    ("search_events", {"actor": "dev-1"}),
    ("search_events", {"actor": "dev-2", "type": "push"}),
    ("search_events", {"type": "role_assignment", "limit": 7}),
    ("search_events", {"source": "okta", "limit": 100}),
    ("search_events", {"since": "2026-05-01T10:00:00Z", "until": "2026-05-01T12:00:00Z"}),
    ("search_events", {"ip": "198.51.100.7"}),
    ("search_events", {"ids": ["s0-b0-0000", "s1-b2-0299", "s2-b1-0150"]}),
    ("search_events", {"actor": "dev-4", "since": "2026-05-02T00:00:00Z", "limit": 5}),
    ("search_findings", {}),
    ("search_findings", {"actor": "dev-1"}),
    ("search_findings", {"type": "new-actor", "limit": 2}),
    ("check_baseline", {"entity": "dev-0"}),
    ("check_baseline", {"entity": "dev-3", "event_type": "login"}),
    ("check_baseline", {"entity": "dev-2", "source": "aws"}),
    ("check_baseline", {"entity": "nobody-known"}),
    ("get_raw_event", {"id": "s1-b1-0042"}),
    ("get_raw_event", {"id": "s2-b2-0299"}),
    ("get_raw_event", {"id": "s0-b2-01"}),  # a prefix shared by ten events: ambiguous on every server alike
    ("get_raw_event", {"id": "missing-event"}),
]


@pytest.fixture
def team(pg_server: PgServer, tmp_path: Path) -> Iterator[tuple[str, str, list[Path]]]:  # noqa: F811
    """One database holding the ledger and the store, both migrated as the README says, and three workspaces."""
    db = make_pg_ledger(pg_server, "harness_team")
    migrate = subprocess.run(
        harness_argv("--store", db.dsn, "store", "migrate", "--admin-dsn", db.admin_dsn,
                     "--owner-role", pg_server.reserve_role_name("harness_store_owner_t3"),
                     "--app-role", pg_server.reserve_role_name("harness_store_app_t3"), "--grant-app-to", db.login_role),
        capture_output=True, text=True, env=clean_env(), timeout=120,
    )
    assert migrate.returncode == 0, migrate.stdout + migrate.stderr
    workspaces = []
    for index in range(SERVERS):
        workspace = tmp_path / f"server-{index}"
        workspace.mkdir()
        workspaces.append(workspace)
    try:
        yield db.dsn, db.admin_dsn, workspaces
    finally:
        pg_server.drop_database(db.dbname)


def _env(dsn: str) -> dict[str, str]:
    return clean_env(HARNESS_STORE_URL=dsn, HARNESS_LEDGER_URL=dsn)


def _harness(workspace: Path, dsn: str, *args: str) -> dict[str, Any]:
    done = subprocess.run(harness_argv("--workspace", str(workspace), *args), capture_output=True, text=True,
                          env=_env(dsn), timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


async def _call_all(urls: list[str], calls: list[tuple[str, dict[str, Any]]]) -> list[list[str]]:
    """The text of each call's answer on each server (one MCP session per server)."""
    answers: list[list[str]] = [[] for _ in urls]

    async def one(index: int) -> None:
        async with Client(urls[index], mode="legacy") as client:
            for name, arguments in calls:
                result = await client.call_tool(name, arguments)
                answers[index].append(result.content[0].text)

    async with anyio.create_task_group() as group:
        for index in range(len(urls)):
            group.start_soon(one, index)
    return answers


async def test_three_servers_share_one_store_and_ledger_and_answer_alike(
    team: tuple[str, str, list[Path]], tmp_path: Path
) -> None:
    dsn, admin_dsn, workspaces = team
    processes, urls = [], []
    try:
        for workspace in workspaces:
            port = free_port()
            proc = subprocess.Popen(
                harness_argv("--workspace", str(workspace), "serve", "--http", f"127.0.0.1:{port}"),
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=_env(dsn),
            )
            processes.append(proc)
            wait_for_port(port, proc, timeout=120)
            urls.append(f"http://127.0.0.1:{port}/mcp")

        # Every server's operator ingests at once, BATCHES files each, while agents call every server.
        files = {
            (server, batch): _write_lines(tmp_path / f"events-{server}-{batch}.jsonl",
                                          [_event(server, batch, n) for n in range(BATCH_EVENTS)])
            for server in range(SERVERS) for batch in range(BATCHES)
        }
        ingests = [
            subprocess.Popen(harness_argv("--workspace", str(workspaces[server]), "ingest", "events", str(path)),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(dsn))
            for (server, _), path in files.items()
        ]
        during = await _call_all(urls, [("search_events", {"actor": "dev-1", "limit": 20})] * 10)
        outputs = [proc.communicate(timeout=300) for proc in ingests]
        assert [proc.returncode for proc in ingests] == [0] * len(ingests), outputs
        reports = [json.loads(out) for out, _ in outputs]
        assert [(r["added"], r["skipped_duplicates"]) for r in reports] == [(BATCH_EVENTS, 0)] * len(ingests)
        assert all(json.loads(text).get("events") is not None for answers in during for text in answers)

        for server, workspace in enumerate(workspaces):
            findings = _write_lines(tmp_path / f"findings-{server}.jsonl", [_finding(server)])
            assert _harness(workspace, dsn, "ingest", "findings", str(findings))["added"] == 1
        # A feed replayed from another server: every record a duplicate, nothing appended.
        again = _harness(workspaces[2], dsn, "ingest", "events", str(files[(0, 1)]))
        assert (again["added"], again["skipped_duplicates"]) == (0, BATCH_EVENTS)
        assert _harness(workspaces[1], dsn, "baseline", "build")["appended"] is True

        answers = await _call_all(urls, QUERIES)
    finally:
        for proc in processes:
            proc.terminate()
        for proc in processes:
            proc.communicate(timeout=30)

    # Exactly once, and stream order is commit order: seq 1..N with no gap, each batch one contiguous run, batches
    # numbered in the order their rows were sequenced.
    with psycopg.connect(admin_dsn) as conn:
        ids = [row[0] for row in conn.execute("SELECT id FROM store.events ORDER BY seq")]
        seqs = [row[0] for row in conn.execute("SELECT seq FROM store.events ORDER BY seq")]
        runs = conn.execute(
            "SELECT batch, min(seq), max(seq), count(*) FROM store.events GROUP BY batch ORDER BY min(seq)"
        ).fetchall()
    expected = {_event(s, b, n)["id"] for s in range(SERVERS) for b in range(BATCHES) for n in range(BATCH_EVENTS)}
    assert len(ids) == len(expected) and set(ids) == expected
    assert seqs == list(range(1, len(expected) + 1))
    assert [count for *_, count in runs] == [BATCH_EVENTS] * len(files)
    assert all(high - low + 1 == count for _, low, high, count in runs)
    assert [batch for batch, *_ in runs] == sorted(batch for batch, *_ in runs)
    # Each file's events are one batch, in the file's order.
    by_batch: dict[int, list[str]] = {}
    for batch_id, event_id in zip((b for b, low, high, _ in runs for _ in range(low, high + 1)), ids, strict=True):
        by_batch.setdefault(batch_id, []).append(event_id)
    assert sorted(by_batch.values()) == sorted(
        [_event(s, b, n)["id"] for n in range(BATCH_EVENTS)] for s in range(SERVERS) for b in range(BATCHES)
    )

    # The same bytes from every server, for every query (errors included).
    for position, (name, arguments) in enumerate(QUERIES):
        texts = {answers[server][position] for server in range(SERVERS)}
        assert len(texts) == 1, (name, arguments, texts)
    decoded = [json.loads(answers[0][position]) for position in range(len(QUERIES))]
    assert len(decoded[0]["events"]) == 50 and decoded[9]["total"] == SERVERS
    assert decoded[12]["known"] is True and decoded[15]["known"] is False
    assert (decoded[16]["found"], decoded[16]["id"], decoded[16]["payload"]["n"]) == (True, "s1-b1-0042", 42)
    assert decoded[19]["found"] is False

    # One ledger for all: it verifies, and holds every server's calls.
    verified = _harness(workspaces[0], dsn, "ledger", "verify")
    assert verified["ok"] is True, verified
    listed = _harness(workspaces[0], dsn, "ledger", "list", "--tool", "check_baseline", "--limit", "100")
    assert len(listed["calls"]) == SERVERS * 4
