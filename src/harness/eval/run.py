"""`harness eval run` (docs/eval.md): every scenario, N passes each, in a fresh workspace and server per pass."""

from __future__ import annotations

import shlex
import shutil
import tempfile
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from harness.errors import InvalidInput
from harness.eval.aur import serve_aur
from harness.eval.grade import Grade, grade, toolset_operations
from harness.eval.report import build_report, markdown
from harness.eval.sandbox import build_workspace, evidence_state, run_agent, start_server
from harness.eval.scenario import Scenario, ScenarioError, load_scenarios, slug
from harness.text import canonjson
from harness.text.sanitize import echo

MAX_PASSES = 100


def _one_pass(scenario: Scenario, argv: list[str], root: Path, logs: Path) -> tuple[Grade, float]:
    workspace = build_workspace(scenario, root)
    setup_state = evidence_state(workspace)
    # A triage scenario's loopback AUR lives exactly as long as the pass's server (harness.eval.aur).
    with serve_aur(scenario.aur, workspace) if scenario.aur is not None else nullcontext():
        server = start_server(workspace, logs.with_suffix(".server.stderr"), scenario.toolsets)
        try:
            run = run_agent(argv, scenario, server, root / "agent", logs)
        finally:
            server.stop()
    return grade(scenario, workspace, run, setup_state, toolset_operations(scenario.toolsets)), run.seconds


def run_eval(paths: list[Path], agent: str, passes: int, out: Path | None) -> dict[str, Any]:
    """Run, grade and report; with `out`, write report.json, the markdown table beside it and the agent and server logs there."""
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
    with tempfile.TemporaryDirectory(prefix="harness-eval-") as scratch:
        logs_dir = (out / "logs") if out is not None else Path(scratch) / "logs"
        logs_dir.mkdir(parents=True, exist_ok=True)
        for scenario in scenarios:
            grades = []
            for index in range(passes):
                name = f"{slug(scenario.id)}-{index + 1}"
                graded, seconds = _one_pass(scenario, argv, Path(scratch) / name, logs_dir / name)
                grades.append(graded)
                timings.setdefault(scenario.id, []).append(seconds)
            results.append((scenario, grades))
    report = build_report(agent, passes, results, timings)
    if out is not None:
        (out / "report.json").write_text(canonjson.pretty(report) + "\n", encoding="utf-8")
        (out / "report").with_suffix(".md").write_text(markdown(report), encoding="utf-8")
    return report
