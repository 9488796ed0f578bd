"""One scenario pass's world (docs/eval.md): a fresh workspace built from the scenario, a fresh `harness serve` on
loopback with a bearer token, and the agent command run against it under a time limit.

Everything runs as subprocesses of the real `harness` command, so an agent meets exactly what a deployment
serves. The agent's output is kept for the operator but never graded. The server and the agent each run in their
own process group, registered in `Children` until reaped, so a signal's cleanup can stop whatever is running.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx2

from harness.config import CONFIG_NAME, Overrides, Settings, load_settings
from harness.eval.scenario import Scenario
from harness.rules.corpus import WORKSPACE_RELPATH
from harness.store import Store
from harness.workspace import init_workspace

# Generous: a loaded machine can take well over a minute to start the server (seen: more than 60 s).
SERVER_START_S = 300.0
# A server that exits before it is ready is started again this many times (a fresh port each time) before the
# pass is a harness error: one lost race for a free port should not cost a pass.
SERVER_RESTARTS = 2
# The readiness probe's backoff: from the first delay, doubled up to the cap.
READY_FIRST_DELAY_S = 0.05
READY_MAX_DELAY_S = 1.0
READY_PROBE_TIMEOUT_S = 5.0
MCP_PROTOCOL_VERSION = "2025-11-25"
HARNESS = [sys.executable, "-c", "from harness.cli import main; main()"]
TOOLSETS = "investigate"
# The streams of the scenario's evidence: an agent that changes one edited the store.
EVIDENCE_STREAMS = ("events", "findings", "baseline")


def harness_env() -> dict[str, str]:
    """This process's environment without HARNESS_ variables, so the user's configuration never leaks into a
    scenario (an agent's own keys, e.g. a model API key, still pass through)."""
    return {key: value for key, value in os.environ.items() if not key.startswith("HARNESS_")}


def settings(workspace: Path) -> Settings:
    """The workspace's settings as its server sees them (the environment without HARNESS_ variables)."""
    return load_settings(Overrides(workspace=workspace), harness_env())


def build_workspace(scenario: Scenario, root: Path) -> Path:
    """What `harness init --empty` creates (in-process, so setup writes no ledger row), then the scenario's
    events, findings, baseline and rule corpus."""
    workspace = root / "workspace"
    store = Store(workspace / "store")
    init_workspace(settings(workspace), store, empty=True)
    for stream, records in (("events", scenario.events), ("findings", scenario.findings)):
        if records:
            store.append_batch(stream, records)
    if scenario.baseline is not None:
        store.append_batch("baseline", [scenario.baseline])
    if scenario.rules is not None:
        path = workspace / WORKSPACE_RELPATH
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(scenario.rules, encoding="utf-8")
    return workspace


def evidence_state(workspace: Path) -> dict[str, str]:
    """The last commit that changed each evidence stream: any change after setup is an edit of the store."""
    store = Store(workspace / "store")
    head = store.head()
    return {stream: store.last_change(head, stream) if head else "" for stream in EVIDENCE_STREAMS}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class HarnessSideError(Exception):
    """The harness side of a pass failed (its server would not start or died): the pass is a harness error."""


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL the process group `process` leads (it was started in a new session), then reap the leader."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()


class Children:
    """The process groups a run has started and not yet reaped, so that a signal's cleanup stops them all."""

    def __init__(self) -> None:
        self._running: dict[int, subprocess.Popen[bytes]] = {}

    def add(self, process: subprocess.Popen[bytes]) -> None:
        self._running[process.pid] = process

    def discard(self, process: subprocess.Popen[bytes]) -> None:
        self._running.pop(process.pid, None)

    def pids(self) -> list[int]:
        return sorted(self._running)

    def kill_all(self) -> None:
        """SIGKILL every registered group: the workspaces are temporary, so nothing is lost by skipping a graceful stop."""
        for process in list(self._running.values()):
            _kill_group(process)
            self.discard(process)


@dataclass
class Server:
    """A running `harness serve --http` on loopback."""

    process: subprocess.Popen[bytes]
    url: str
    token: str
    children: Children

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.children.discard(self.process)


def _initialize_answers(http: httpx2.Client, server: Server) -> bool:
    """Whether an MCP initialize over the streamable HTTP endpoint gets its result (the session it opens is closed)."""
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"protocolVersion": MCP_PROTOCOL_VERSION, "capabilities": {},
                          "clientInfo": {"name": "harness-eval-readiness", "version": "1"}}}
    headers = {"accept": "application/json, text/event-stream", "authorization": f"Bearer {server.token}"}
    try:
        answer = http.post(server.url, json=request, headers=headers)
        session = answer.headers.get("mcp-session-id")
        if session:
            http.delete(server.url, headers={**headers, "mcp-session-id": session})
    except httpx2.HTTPError:
        return False
    if answer.status_code != 200 or not answer.headers.get("content-type", "").startswith("application/json"):
        return False
    try:
        result = json.loads(answer.content).get("result")
    except (ValueError, AttributeError):
        return False
    return isinstance(result, dict) and "protocolVersion" in result


def _wait_ready(server: Server, deadline: float) -> bool:
    """Poll initialize with a bounded backoff until it answers (True), the server exits or the deadline passes."""
    delay = READY_FIRST_DELAY_S
    with httpx2.Client(timeout=READY_PROBE_TIMEOUT_S) as http:
        while time.monotonic() < deadline:
            if server.process.poll() is not None:
                return False
            if _initialize_answers(http, server):
                return True
            time.sleep(max(0.0, min(delay, deadline - time.monotonic())))
            delay = min(delay * 2, READY_MAX_DELAY_S)
    return False


def start_server(workspace: Path, log: Path, children: Children, toolsets: str = TOOLSETS) -> Server:
    """A fresh server on a free loopback port serving `toolsets` and requiring a new bearer token, once it answers
    an MCP initialize.

    A server that exits before that is started again, up to SERVER_RESTARTS times; then, or when it is still not
    ready at SERVER_START_S, HarnessSideError. Every attempt's stdout and stderr are appended to `log` (a
    server that cannot start prints its JSON error on stdout)."""
    config = workspace / CONFIG_NAME
    base_config = config.read_text(encoding="utf-8")
    deadline = time.monotonic() + SERVER_START_S
    statuses: list[int] = []
    for _ in range(1 + SERVER_RESTARTS):
        port = _free_port()
        token = secrets.token_urlsafe(32)
        # A loopback bind alone serves without a token (docs/decisions.md, "Team server"); the remote-bind path
        # with this one host allowed makes every call carry the bearer token, as a deployed server's would.
        config.write_text(f'{base_config}\n[serve]\nallowed_hosts = ["127.0.0.1:{port}"]\n', encoding="utf-8")
        with log.open("ab") as err:
            process = subprocess.Popen(
                [*HARNESS, "--workspace", str(workspace), "serve", "--http", f"127.0.0.1:{port}", "--allow-remote",
                 "--toolsets", toolsets],
                stdin=subprocess.DEVNULL, stdout=err, stderr=err,
                env={**harness_env(), "HARNESS_SERVE_TOKEN": token}, start_new_session=True,
            )
        children.add(process)
        server = Server(process, f"http://127.0.0.1:{port}/mcp", token, children)
        if _wait_ready(server, deadline):
            return server
        if process.poll() is None:
            server.stop()
            raise HarnessSideError(f"harness serve did not answer initialize within {SERVER_START_S:.0f} s; see {log.name}")
        children.discard(process)
        statuses.append(process.returncode)
    raise HarnessSideError(
        f"harness serve exited before it was ready, {len(statuses)} times (exit status {statuses[-1]}); see {log.name}"
    )


@dataclass(frozen=True)
class AgentRun:
    """How the agent command ended."""

    exit_code: int | None
    timed_out: bool
    seconds: float


def run_agent(argv: list[str], scenario: Scenario, server: Server, cwd: Path, logs: Path,
              children: Children) -> AgentRun:
    """The agent command with the server URL, token and task in its environment, in its own process group: the
    group is killed at the scenario's time limit, and when the agent exits (what it left running). Its stdout and
    stderr go to files beside the report, never to the grade."""
    env = {
        **harness_env(),
        "HARNESS_EVAL_URL": server.url,
        "HARNESS_EVAL_TOKEN": server.token,
        "HARNESS_EVAL_TASK": scenario.task_text(),
        "HARNESS_EVAL_FINDING_ID": scenario.finding_id,
        "HARNESS_EVAL_ALERT": scenario.alert_json(),
        "HARNESS_EVAL_SCENARIO": scenario.id,
    }
    cwd.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with (logs.with_suffix(".stdout")).open("wb") as out, (logs.with_suffix(".stderr")).open("wb") as err:
        process = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                   start_new_session=True)
    children.add(process)
    timed_out = False
    try:
        process.wait(timeout=scenario.time_limit_s)
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        _kill_group(process)
        children.discard(process)
    seconds = time.monotonic() - started
    return AgentRun(None if timed_out else process.returncode, timed_out, seconds)
