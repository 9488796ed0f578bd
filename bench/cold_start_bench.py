"""Cold CLI reads (issue 11 goal 5): fresh `harness search_events` (actor+type) and `harness check_baseline`
processes end to end, beside fresh `python -c pass` and `python -c "import harness"` processes of the same run,
and `python -c "import harness.text.redact"` (the redactor every recorded call needs).

Usage: python bench/cold_start_bench.py [--quick] [--events N] [--runs N] [--workspace DIR]. Prints one JSON
object on stdout: {"bench", "machine", "results": [{"name", "value", "unit", "target", "meets_target",
"baseline", "ratio"}]}. The four kinds of process take turns, so drift on a noisy machine hits them alike.
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


def _wall(argv: list[str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=quiet_env(), check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {done.stderr.decode('utf-8', 'replace')}")
    return elapsed


def figures(workspace: Path, runs: int) -> list[dict[str, Any]]:
    """Median wall time of each kind of cold process over `runs` turns."""
    cli = [*harness_command(), "--workspace", str(workspace)]
    kinds = {
        "python_pass": [sys.executable, "-c", "pass"],
        "import_harness": [sys.executable, "-c", "import harness"],
        # What bounds a cold call today: the shape redactor builds its catalogue (RE2 patterns and sets) at import.
        "import_redactor": [sys.executable, "-c", "import harness.text.redact"],
        "search_events": [*cli, "search_events", "--actor", "actor-0001", "--type", "login"],
        "check_baseline": [*cli, "check_baseline", "--entity", "actor-0001", "--event-type", "login"],
    }
    times: dict[str, list[float]] = {name: [] for name in kinds}
    for name, argv in kinds.items():
        _wall(argv)  # one untimed run each, so every timed run finds compiled bytecode and a built index
    for _ in range(runs):
        for name, argv in kinds.items():
            times[name].append(_wall(argv))
    python_s = median(times["python_pass"])
    import_s = median(times["import_harness"])
    redactor_s = median(times["import_redactor"])
    out = [
        row("python_import_harness_cold_median", import_s, "s", baseline=python_s, ratio=import_s / python_s),
        row("python_import_redactor_cold_median", redactor_s, "s", baseline=python_s, ratio=redactor_s / python_s),
    ]
    for name in ("search_events", "check_baseline"):
        value = median(times[name])
        out.append(
            row(f"cli_{name}_cold_median", value, "s", target=f"<= {TARGET_S} s", meets_target=value <= TARGET_S,
                baseline=python_s, ratio=value / python_s)
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
