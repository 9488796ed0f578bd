"""A scripted agent (docs/eval.md): replays a transcript of steps, so that a test can make an agent do exactly
the right or the wrong thing and see how the runner grades it.

    python -m harness.eval.agents.scripted TRANSCRIPT.yaml
    python -m harness.eval.agents.scripted DIR      (DIR/<scenario id>.yaml, the scenario from HARNESS_EVAL_SCENARIO)

A transcript is a YAML (or JSON) mapping with `steps`, each one of:
  {call: TOOL, arguments: {...}}   a tools/call over MCP (errors are answers, not failures)
  {sleep: SECONDS}                 wait (a slow agent: the runner's time limit)
  {append_event: {...}}            append an event to ../workspace/store directly (an agent editing the store)
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

import anyio

from harness.eval.agents.client import call, connect
from harness.rules.corpus import load_strict_yaml
from harness.store import Store


def load_transcript(path: Path) -> list[dict[str, Any]]:
    """The steps of a transcript file; anything else is a ValueError naming the step."""
    document = load_strict_yaml(path.read_text(encoding="utf-8"))
    steps = document.get("steps") if isinstance(document, dict) else None
    if not isinstance(steps, list):
        raise ValueError(f"{path}: a transcript is a mapping with a `steps` list")
    for index, step in enumerate(steps):
        if not isinstance(step, dict) or len({"call", "sleep", "append_event"} & set(step)) != 1:
            raise ValueError(f"{path}: steps[{index}]: needs exactly one of call, sleep, append_event")
    return steps


async def replay(steps: list[dict[str, Any]]) -> None:
    async with connect() as client:
        for step in steps:
            if "call" in step:
                await call(client, str(step["call"]), dict(step.get("arguments") or {}))
            elif "sleep" in step:
                time.sleep(float(step["sleep"]))
            else:
                Store(Path("..") / "workspace" / "store").append_batch("events", [step["append_event"]])


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m harness.eval.agents.scripted TRANSCRIPT", file=sys.stderr)
        return 2
    path = Path(argv[0])
    if path.is_dir():
        path = path / f"{os.environ['HARNESS_EVAL_SCENARIO']}.yaml"
    anyio.run(replay, load_transcript(path))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
