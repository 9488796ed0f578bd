"""One scenario pass's world (docs/eval.md): a fresh workspace built from the scenario, a fresh `harness serve` on
loopback with a bearer token, and the agent command run against it under a time limit.

Everything runs as subprocesses of the real `harness` command, so an agent meets exactly what a deployment
serves. The agent's output is kept for the operator but never graded.
"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from harness.config import CONFIG_NAME, Overrides, Settings, load_settings
from harness.errors import UpstreamUnavailable
from harness.eval.scenario import Scenario
from harness.rules.corpus import WORKSPACE_RELPATH
from harness.store import Store
from harness.workspace import init_workspace

# Generous: a loaded machine can take well over a minute to start the server (seen: more than 60 s).
SERVER_START_S = 300.0
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


@dataclass
class Server:
    """A running `harness serve --http` on loopback."""

    process: subprocess.Popen[bytes]
    url: str
    token: str

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_server(workspace: Path, log: Path, toolsets: str = TOOLSETS) -> Server:
    """A fresh server on a free loopback port serving `toolsets` and requiring a new bearer token, once it accepts
    connections."""
    port = _free_port()
    token = secrets.token_urlsafe(32)
    # A loopback bind alone serves without a token (docs/decisions.md, "Team server"); the remote-bind path with
    # this one host allowed makes every call carry the bearer token, as a deployed server's would.
    with (workspace / CONFIG_NAME).open("a", encoding="utf-8") as config:
        config.write(f'\n[serve]\nallowed_hosts = ["127.0.0.1:{port}"]\n')
    with log.open("wb") as err:
        process = subprocess.Popen(
            [*HARNESS, "--workspace", str(workspace), "serve", "--http", f"127.0.0.1:{port}", "--allow-remote",
             "--toolsets", toolsets],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
            env={**harness_env(), "HARNESS_SERVE_TOKEN": token},
        )
    server = Server(process, f"http://127.0.0.1:{port}/mcp", token)
    deadline = time.monotonic() + SERVER_START_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise UpstreamUnavailable(f"harness serve exited with status {process.returncode}; see {log}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return server
        except OSError:
            time.sleep(0.1)
    server.stop()
    raise UpstreamUnavailable(f"harness serve did not listen within {SERVER_START_S:.0f} s; see {log}")


@dataclass(frozen=True)
class AgentRun:
    """How the agent command ended."""

    exit_code: int | None
    timed_out: bool
    seconds: float


def run_agent(argv: list[str], scenario: Scenario, server: Server, cwd: Path, logs: Path) -> AgentRun:
    """The agent command with the server URL, token and task in its environment, killed (its whole process
    group) at the scenario's time limit. Its stdout and stderr go to files beside the report, never to the grade."""
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
        try:
            code = process.wait(timeout=scenario.time_limit_s)
            return AgentRun(code, False, time.monotonic() - started)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            return AgentRun(None, True, time.monotonic() - started)
