"""`harness eval run` (docs/eval.md): every scenario, N passes each, in a fresh workspace and server per pass.

A pass whose harness side fails is graded `harness_error` and the run goes on; SIGTERM or SIGINT stops the agent
and the server and ends the run with 128 + the signal number.
"""

from __future__ import annotations

import logging
import shlex
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from types import FrameType
from typing import Any

from harness.errors import InvalidInput
from harness.eval.aur import serve_aur
from harness.eval.grade import Grade, grade, harness_error, toolset_operations
from harness.eval.report import build_report, markdown
from harness.eval.sandbox import (
    Children,
    HarnessSideError,
    build_workspace,
    evidence_state,
    run_agent,
    start_server,
)
from harness.eval.scenario import Scenario, ScenarioError, load_scenarios, slug
from harness.text import canonjson
from harness.text.sanitize import echo

MAX_PASSES = 100
MAX_REASON_CHARS = 500
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
log = logging.getLogger("harness.eval")


class Interrupted(BaseException):
    """SIGTERM or SIGINT during a run. A BaseException, so that no pass grades it as a harness error: it unwinds
    the run, every pass's cleanup on the way."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


@contextmanager
def _stop_on_signals() -> Iterator[None]:
    """While the run lasts, the first SIGTERM or SIGINT raises Interrupted; later ones are ignored, so the cleanup
    they would interrupt finishes. Signal handlers exist only in the main thread; elsewhere nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []

    def handler(signum: int, _frame: FrameType | None) -> None:
        if not received:
            received.append(signum)
            raise Interrupted(signum)

    previous = {number: signal.signal(number, handler) for number in STOP_SIGNALS}
    try:
        yield
    finally:
        for number, old in previous.items():
            signal.signal(number, old)


def _one_pass(scenario: Scenario, argv: list[str], root: Path, logs: Path, children: Children) -> tuple[Grade, float]:
    """One pass and its grade; a failure of its harness side (building the workspace, starting the server, the
    server dying during the pass, reading the grade) is the grade `harness_error` with the reason."""
    started = time.monotonic()
    try:
        workspace = build_workspace(scenario, root)
        setup_state = evidence_state(workspace)
        server_log = logs.with_suffix(".server.log")
        # A triage scenario's loopback AUR lives exactly as long as the pass's server (harness.eval.aur).
        with serve_aur(scenario.aur, workspace) if scenario.aur is not None else nullcontext():
            server = start_server(workspace, server_log, children, scenario.toolsets)
            try:
                run = run_agent(argv, scenario, server, root / "agent", logs, children)
                exited = server.process.poll()
            finally:
                server.stop()
        if exited is not None:
            raise HarnessSideError(f"harness serve exited with status {exited} during the pass; see {server_log.name}")
        return grade(scenario, workspace, run, setup_state, toolset_operations(scenario.toolsets)), run.seconds
    except Exception as exc:  # noqa: BLE001 - any harness-side failure is this pass's grade, not the run's end
        log.warning("eval pass %s: harness error", root.name, exc_info=True)
        reason = f"{type(exc).__name__}: {exc}"[:MAX_REASON_CHARS]
        return harness_error(reason), time.monotonic() - started


def run_eval(paths: list[Path], agent: str, passes: int, out: Path | None) -> dict[str, Any]:
    """Run, grade and report; with `out`, write report.json, the markdown table beside it and the agent and server logs there.

    Raises Interrupted on SIGTERM or SIGINT, once the agent's process group and the server are killed."""
    if not 1 <= passes <= MAX_PASSES:
        raise InvalidInput(f"--passes: must be 1..{MAX_PASSES}, got {passes}")
    try:
        argv = shlex.split(agent)
    except ValueError as exc:
        raise InvalidInput(f"--agent: {exc}") from None
    if not argv:
        raise InvalidInput("--agent: must name a command")
    # The agent runs in its own directory, so a relative command path is resolved here, where the user typed it.
    program = shutil.which(argv[0])
    if program is None:
        raise InvalidInput(f"--agent: command {echo(argv[0])} is not found or not executable")
    argv[0] = str(Path(program).absolute()) if "/" in argv[0] else argv[0]
    try:
        scenarios = load_scenarios(paths)
    except ScenarioError as exc:
        raise InvalidInput(f"SCENARIOS: {exc}") from None
    if not scenarios:
        raise InvalidInput("SCENARIOS: no scenario files found")
    results: list[tuple[Scenario, list[Grade]]] = []
    timings: dict[str, list[float]] = {}
    children = Children()
    with _stop_on_signals(), tempfile.TemporaryDirectory(prefix="harness-eval-") as scratch:
        try:
            logs_dir = (out / "logs") if out is not None else Path(scratch) / "logs"
            logs_dir.mkdir(parents=True, exist_ok=True)
            for scenario in scenarios:
                grades = []
                for index in range(passes):
                    name = f"{slug(scenario.id)}-{index + 1}"
                    graded, seconds = _one_pass(scenario, argv, Path(scratch) / name, logs_dir / name, children)
                    grades.append(graded)
                    timings.setdefault(scenario.id, []).append(seconds)
                results.append((scenario, grades))
        finally:
            # A signal can land inside a pass's own cleanup; whatever it left running is killed here, before the
            # scratch directory goes.
            children.kill_all()
    report = build_report(agent, passes, results, timings)
    if out is not None:
        (out / "report.json").write_text(canonjson.pretty(report) + "\n", encoding="utf-8")
        (out / "report").with_suffix(".md").write_text(markdown(report), encoding="utf-8")
    return report
