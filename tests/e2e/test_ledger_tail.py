"""`harness ledger tail` (issue 10, docs/decisions.md "Ledger tail and signed heads"): run with --follow as a real
process against concurrent writer processes, killed and restarted from the position of the last line it
delivered, it yields every row exactly once on both backends; its syslog lines parse as RFC 5424."""

from __future__ import annotations

import json
import multiprocessing
import queue
import re
import subprocess
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest
from pgsupport import PgServer, pg_server  # noqa: F401  (the shared session fixture)
from recording_support import all_rows, make_pg_ledger, utc_now
from runners import run_cli

from harness.ledger.settings import LedgerSettings
from harness.ledger.store import open_store
from harness.text.redact import KnownSecrets, build_redactor
from tests.e2e.procs import clean_env, harness_argv
from tests.ledger.ledger_support import concurrency_worker

WRITERS = 4
CALLS = 30
READ_TIMEOUT = 60.0


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.pg)])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        path = tmp_path / "ledger.sqlite3"
        store = open_store(str(path), redactor=build_redactor(KnownSecrets()), clock=utc_now, settings=LedgerSettings())
        store.close()
        yield str(path)
        return
    server: PgServer = request.getfixturevalue("pg_server")
    db = make_pg_ledger(server, "harness_tail")
    yield db.dsn
    server.drop_database(db.dbname)


class Tailer:
    """`harness ledger tail --follow` in a subprocess, its stdout read line by line on a thread."""

    def __init__(self, workspace: Path, target: str, *extra: str) -> None:
        argv = harness_argv("--workspace", str(workspace), "--ledger", target, "ledger", "tail", "--follow", *extra)
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, env=clean_env(), text=True)
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def take(self, count: int) -> list[dict]:
        return [json.loads(self.lines.get(timeout=READ_TIMEOUT)) for _ in range(count)]

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait()


def _write(target: str) -> ProcessPoolExecutor:
    pool = ProcessPoolExecutor(WRITERS, mp_context=multiprocessing.get_context("spawn"))
    for worker in range(WRITERS):
        pool.submit(concurrency_worker, target, worker, CALLS)
    return pool


def test_follow_restarted_from_its_position_yields_every_row_exactly_once(tmp_path: Path, target: str) -> None:
    total = 2 * WRITERS * CALLS
    first = Tailer(tmp_path, target, "--interval", "0.05")
    pool = _write(target)
    try:
        delivered = first.take(total // 3)
        first.kill()
        second = Tailer(tmp_path, target, "--interval", "0.05", "--from", delivered[-1]["position"])
        try:
            delivered += second.take(total - len(delivered))
        finally:
            second.kill()
    finally:
        pool.shutdown(wait=True)
    stored = all_rows(target)
    assert len(stored) == total
    assert [d["id"] for d in delivered] == list(dict.fromkeys(d["id"] for d in delivered))
    assert sorted(d["id"] for d in delivered) == sorted(str(r.id) for r in stored)
    by_id = {str(r.id): r.to_json() for r in stored}
    assert all({k: v for k, v in d.items() if k != "position"} == by_id[d["id"]] for d in delivered)
    if not target.startswith("postgresql"):
        # One SQLite writer at a time: commit order is chain order. PostgreSQL orders by the writing transaction's
        # id, which has been seen out of chain order under these writers (docs/decisions.md).
        seen: dict[str, int] = {}
        for d in delivered:
            assert d["chain_seq"] == seen.get(d["conversation_id"], 0) + 1
            seen[d["conversation_id"]] = d["chain_seq"]
    last = delivered[-1]["position"]
    rest = run_cli(["--workspace", str(tmp_path), "--ledger", target, "ledger", "tail", "--from", last])
    assert (rest.exit_code, rest.stdout) == (0, "")


# RFC 5424 section 6, as one strict expression: HEADER SP STRUCTURED-DATA [SP MSG].
_PRINTUS = r"[!-~]"
_NAME = r'[!#-<>-\\^-~]{1,32}'  # PRINTUSASCII except '=', SP, ']', '"'
_PARAM_VALUE = r'(?:[^"\\\]]|\\["\\\]])*'
_SD_ELEMENT = rf'\[{_NAME}(?: {_NAME}="{_PARAM_VALUE}")*\]'
_TIMESTAMP = (
    r"[0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])T(?:[01][0-9]|2[0-3]):[0-5][0-9]:(?:[0-5][0-9]|60)"
    r"(?:\.[0-9]{1,6})?(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])"
)
RFC5424 = re.compile(
    rf"<(?P<pri>0|[1-9][0-9]{{0,2}})>(?P<version>[1-9][0-9]{{0,2}}) (?P<ts>-|{_TIMESTAMP})"
    rf" (?P<host>-|{_PRINTUS}{{1,255}}) (?P<app>-|{_PRINTUS}{{1,48}}) (?P<procid>-|{_PRINTUS}{{1,128}})"
    rf" (?P<msgid>-|{_PRINTUS}{{1,32}}) (?P<sd>-|(?:{_SD_ELEMENT})+)(?: (?P<msg>.*))?",
    re.S,
)
_SD_PARAM = re.compile(rf'({_NAME})="({_PARAM_VALUE})"')


def _settled(args: list[str], count: int) -> list[str]:
    """The lines of a one-shot tail once `count` rows are ready: on PostgreSQL a transaction still open anywhere
    in the cluster (another test's database too) holds the snapshot's xmin, and with it the tail, back."""
    deadline = time.monotonic() + READ_TIMEOUT
    while True:
        result = run_cli(args)
        assert result.exit_code == 0, result.stdout
        lines = result.stdout.splitlines()
        if len(lines) >= count or time.monotonic() > deadline:
            return lines
        time.sleep(0.1)


def test_syslog_lines_parse_as_rfc5424(tmp_path: Path, target: str) -> None:
    concurrency_worker(target, 0, 6)
    base = ["--workspace", str(tmp_path), "--ledger", target, "ledger", "tail"]
    lines = _settled([*base, "--format", "syslog"], 12)
    stored = {str(r.id): r for r in all_rows(target)}
    assert len(lines) == len(stored) == 12
    jsonl = [json.loads(line) for line in _settled(base, 12)]
    for line, expected in zip(lines, jsonl, strict=True):
        match = RFC5424.fullmatch(line)
        assert match is not None, line
        row = stored[expected["id"]]
        assert int(match["pri"]) == 13 * 8 + (4 if row.status == "error" else 6)
        assert (match["version"], match["app"], match["msgid"], match["ts"]) == (
            "1",
            "triage-harness",
            row.event,
            expected["ts"],
        )
        (element,) = re.findall(_SD_ELEMENT, match["sd"])
        assert element.startswith("[triage-harness@32473 ")
        params = dict(_SD_PARAM.findall(element))
        assert params["position"] == expected["position"]
        assert (params["conversation_id"], int(params["chain_seq"]), params["row_hash"]) == (
            row.conversation_id,
            row.chain_seq,
            row.row_hash.hex(),
        )
        assert json.loads(match["msg"]) == row.to_json()
    resumed = _settled([*base, "--format", "syslog", "--from", jsonl[5]["position"]], 6)
    assert resumed == lines[6:]


@pytest.mark.parametrize(
    ("args", "field"),
    [(["--from", "12"], "from"), (["--format", "xml"], "format"), (["--interval", "0"], "interval"),
     (["--since", "yesterday"], "since")],
)
def test_bad_tail_options_are_refused(tmp_path: Path, args: list[str], field: str) -> None:
    result = run_cli(["--workspace", str(tmp_path), "ledger", "tail", *args])
    assert result.exit_code == 2
    error = result.json()["error"]
    assert (error["code"], error["operation"]) == ("invalid_input", "ledger.tail")
    assert error["message"].startswith(f"{field}:")


def test_tail_of_a_ledger_that_does_not_exist_yet_prints_nothing(tmp_path: Path) -> None:
    """A fresh workspace has no ledger file: the tail is empty, not an internal error."""
    result = run_cli(["--workspace", str(tmp_path), "ledger", "tail"])
    assert result.exit_code == 0, result.stdout + result.stderr
    assert result.stdout == ""
    assert not (tmp_path / "ledger.sqlite3").exists()
