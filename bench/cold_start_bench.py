"""Cold CLI reads (issue 11 goal 5): fresh `harness search_events` (actor+type) and `harness check_baseline`
processes end to end, beside fresh `python -c pass`, `harness --version` (the CLI's own floor: interpreter, entry
point, click), `python -c "import harness"`, `python -c "import harness.text.redact"` (the redactor every
recorded call needs) and a process that only loads the libraries every read loads and uses one pydantic model
(`LIBRARIES_FLOOR`, the least any cold read costs) of the same run. The store's baseline is built by `harness
baseline build` over every event (137 MB at the default million events), so check_baseline reads it through the
baseline index.

Usage: python bench/cold_start_bench.py [--quick] [--events N] [--runs N] [--workspace DIR]. Prints one JSON
object on stdout: {"bench", "machine", "results": [{"name", "value", "unit", "target", "meets_target",
"baseline", "ratio"}]}. The kinds of process take turns, so drift on a noisy machine hits them alike.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import emit, median, row
from investigate_bench import harness_command, populate, quiet_env

TARGET_S = 0.15
# The least a cold read can cost whatever the harness does: the interpreter, the libraries every read loads (the
# CLI's parser, the boundary's validation, the store's database, the redactor's engines, the TOML and YAML of the
# workspace's settings and rules) and one pydantic model built and used, which is where pydantic spends its start.
LIBRARIES_FLOOR = """
import ahocorasick_rs, click, re2, sqlite3, tomli, yaml
from pydantic import BaseModel
class Probe(BaseModel):
    actor: str
    limit: int = 50
Probe.model_validate({"actor": "a"}).model_dump_json()
"""


def _env() -> dict[str, str]:
    # An installed harness runs from bytecode (pip compiles it at install): a shell that turns bytecode off would
    # make every process here compile the sources it imports.
    return {key: value for key, value in quiet_env().items() if key != "PYTHONDONTWRITEBYTECODE"}


def _wall(argv: list[str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=_env(), check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {done.stderr.decode('utf-8', 'replace')}")
    return elapsed


def figures(workspace: Path, runs: int) -> list[dict[str, Any]]:
    """Median wall time of each kind of cold process over `runs` turns."""
    cli = [*harness_command(), "--workspace", str(workspace)]
    kinds = {
        "python_pass": [sys.executable, "-c", "pass"],
        "harness_version": [*harness_command(), "--version"],
        "import_harness": [sys.executable, "-c", "import harness"],
        "import_redactor": [sys.executable, "-c", "import harness.text.redact"],
        "libraries_floor": [sys.executable, "-c", LIBRARIES_FLOOR],
        "search_events": [*cli, "search_events", "--actor", "actor-0001", "--type", "login"],
        "check_baseline": [*cli, "check_baseline", "--entity", "actor-0001", "--event-type", "login"],
    }
    times: dict[str, list[float]] = {name: [] for name in kinds}
    for name, argv in kinds.items():
        _wall(argv)  # one untimed run each, so every timed run finds compiled bytecode and built indexes
    for _ in range(runs):
        for name, argv in kinds.items():
            times[name].append(_wall(argv))
    python_s = median(times["python_pass"])
    version_s = median(times["harness_version"])
    out = [
        row("cli_version_cold_median", version_s, "s", baseline=python_s, ratio=version_s / python_s),
    ]
    for name in ("import_harness", "import_redactor", "libraries_floor"):
        value = median(times[name])
        out.append(row(f"python_{name}_cold_median", value, "s", baseline=python_s, ratio=value / python_s))
    floor_s = median(times["libraries_floor"])
    for name in ("search_events", "check_baseline"):
        value = median(times[name])
        out.append(
            row(f"cli_{name}_cold_median", value, "s", target=f"<= {TARGET_S} s", meets_target=value <= TARGET_S,
                baseline=python_s, ratio=value / python_s, over_version=round(value / version_s, 3),
                over_libraries_floor=round(value / floor_s, 3))
        )  # fmt: skip
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tiny store and 3 runs, for a smoke run")
    parser.add_argument("--events", type=int, default=1_000_000, help="events in the generated store")
    parser.add_argument("--runs", type=int, default=10, help="cold processes of each kind")
    parser.add_argument("--workspace", type=Path, help="reuse (or keep) the generated workspace here")
    args = parser.parse_args()
    events, runs = (3000, 3) if args.quick else (args.events, args.runs)
    with tempfile.TemporaryDirectory(prefix="cold-start-bench-") as tmp:
        workspace = args.workspace or Path(tmp) / "W"
        if not (workspace / "harness.toml").exists():
            populate(workspace, events)
        results = figures(workspace, runs)
    emit("cold_start", results)


if __name__ == "__main__":
    main()
