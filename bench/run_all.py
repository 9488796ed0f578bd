"""Run every benchmark in bench/ and print one JSON document with all their figures.

Each bench is a standalone script printing one JSON object
{"bench", "machine", "results": [{"name", "value", "unit", "target", "meets_target", "baseline", "ratio"}]}.
Pass --quick for the seconds-long smoke variant of each (what the test suite runs).
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


def main(argv: list[str]) -> int:
    extra = [a for a in argv if a == "--quick"]
    results = []
    for script in bench_scripts():
        print(f"bench: running {script.name} ...", file=sys.stderr, flush=True)
        results.append(run(script, extra))
    out = HERE / "out"
    out.mkdir(exist_ok=True)
    text = json.dumps({"benches": results}, indent=2, sort_keys=True)
    (out / ("quick.json" if extra else "results.json")).write_text(text + "\n")
    print(text)
    return 1 if any("error" in r for r in results) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
