"""Run every benchmark in bench/ and print one JSON document with all their figures.

Each bench is a standalone script printing one JSON object
{"bench", "machine", "results": [{"name", "value", "unit", "target", "meets_target", "baseline", "ratio"}]}.
Pass --quick for the seconds-long smoke variant of each (what the test suite runs), and --scale to add issue 11
goal 6's 10,000,000-event store to store_bench.py (tens of minutes and tens of GB under the temporary directory).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def bench_scripts() -> list[Path]:
    """Every bench script, in name order (this runner excluded)."""
    return sorted(p for p in HERE.glob("*.py") if p.name != Path(__file__).name and not p.name.startswith("_"))


def run(script: Path, extra: list[str]) -> dict:
    """Run one bench and return its JSON document (or an error record)."""
    started = time.monotonic()
    proc = subprocess.run([sys.executable, str(script), *extra], capture_output=True, text=True)
    elapsed = round(time.monotonic() - started, 2)
    if proc.returncode != 0:
        return {"bench": script.stem, "error": proc.stderr.strip().splitlines()[-5:], "seconds": elapsed}
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError:
        return {"bench": script.stem, "error": ["stdout is not one JSON document"], "seconds": elapsed}
    doc["seconds"] = elapsed
    return doc


def _number(value: object) -> str:
    if isinstance(value, float):
        return f"{value:,.3f}".rstrip("0").rstrip(".") if abs(value) < 100 else f"{value:,.0f}"
    return "" if value is None else str(value)


def markdown(results: list[dict]) -> str:
    """A table of every figure (for the README): value, target, and the same-run baseline and ratio."""
    lines = ["| bench | figure | value | target | met | baseline (same run) | ratio |", "|---|---|---|---|---|---|---|"]
    for bench in results:
        if "error" in bench or "skipped" in bench:
            reason = bench.get("skipped") or "error"
            lines.append(f"| {bench['bench']} | ({reason}) | | | | | |")
            continue
        for r in bench["results"]:
            met = {True: "yes", False: "**no**", None: ""}[r.get("meets_target")]
            lines.append(
                f"| {bench['bench']} | {r['name']} | {_number(r['value'])} {r['unit']} | {r.get('target') or ''} | {met}"
                f" | {_number(r.get('baseline'))} | {_number(r.get('ratio'))} |"
            )
    return "\n".join(lines) + "\n"


SCALE_ARGS = {"store_bench.py": ["--scale-events", "10000000"]}


def main(argv: list[str]) -> int:
    extra = [a for a in argv if a == "--quick"]
    scale = "--scale" in argv and not extra
    results = []
    for script in bench_scripts():
        print(f"bench: running {script.name} ...", file=sys.stderr, flush=True)
        results.append(run(script, extra + (SCALE_ARGS.get(script.name, []) if scale else [])))
    out = HERE / "out"
    out.mkdir(exist_ok=True)
    text = json.dumps({"benches": results}, indent=2, sort_keys=True)
    stem = "quick" if extra else "results"
    (out / f"{stem}.json").write_text(text + "\n")
    (out / f"{stem}.md").write_text(markdown(results))
    print(text)
    return 1 if any("error" in r for r in results) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
