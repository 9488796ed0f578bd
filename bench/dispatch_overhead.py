"""What recording costs a call (docs/ledger.md §15): a no-op operation through `dispatch` with the SQLite ledger
(default settings: start rows FULL, end rows FULL) against the same calls with the null recorder.

Usage: python bench/dispatch_overhead.py [--quick] [--calls N]. Prints one JSON object on stdout:
{"bench", "machine", "results": [{"name", "value", "unit", "target", "meets_target", "baseline", "ratio"}]}.
The two kinds of call alternate, so drift on a noisy machine hits both alike.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import emit, percentile, row
from pydantic import BaseModel, ConfigDict

from harness.config import Overrides, load_settings
from harness.context import build_context
from harness.dispatch import CallContext, NullRecorder, Recorder, dispatch
from harness.ledger.ids import uuid7
from harness.ledger.recorder import open_recorder
from harness.surface import Implementation, Operation, Registry

TARGET_MS = 1.0


class NoopInput(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NoopOutput(BaseModel):
    pass


def noop(args: NoopInput, ctx: Any) -> NoopOutput:
    return NoopOutput()


REGISTRY = Registry(
    [Operation("noop", "No-op", "investigate", implementation=Implementation(NoopInput, NoopOutput, "No-op.", noop))]
)


def call_context() -> CallContext:
    """Fresh ids per call, as the CLI front door makes them."""
    return CallContext(
        surface="cli",
        conversation_id="bench-conversation",
        conversation_source="flag",
        request_id=str(uuid7()),
        tool_call_id=str(uuid7()),
    )


def timed_call(ctx: Any, recorder: Recorder) -> float:
    """Milliseconds of one dispatch of the no-op operation."""
    call = call_context()
    started = time.perf_counter_ns()
    outcome = dispatch(REGISTRY, "noop", {}, call, ctx, recorder=recorder, clock=ctx.clock)
    elapsed = (time.perf_counter_ns() - started) / 1e6
    if outcome.is_error:
        raise RuntimeError(outcome.text)
    return elapsed


def measure(workspace: Path, calls: int) -> tuple[list[float], list[float]]:
    """(null recorder, SQLite ledger) latencies in ms, alternating, after a warm-up of each."""
    ctx = build_context(load_settings(Overrides(workspace=workspace)))
    settings = ctx.settings
    ledger = open_recorder(
        settings.ledger_target,
        settings=settings.ledger,
        redactor=ctx.redactor,
        clock=ctx.clock,
    )
    null = NullRecorder()
    try:
        for _ in range(min(50, calls)):
            timed_call(ctx, null)
            timed_call(ctx, ledger)
        bare, recorded = [], []
        for _ in range(calls):
            bare.append(timed_call(ctx, null))
            recorded.append(timed_call(ctx, ledger))
    finally:
        ledger.close()
    return bare, recorded


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a seconds-long smoke run")
    parser.add_argument("--calls", type=int, default=None, help="calls of each kind (default 2000, quick 200)")
    args = parser.parse_args()
    calls = args.calls or (200 if args.quick else 2000)
    with tempfile.TemporaryDirectory(prefix="harness-dispatch-bench-") as tmp:
        bare, recorded = measure(Path(tmp), calls)
    bare_p50, ledger_p50 = percentile(bare, 50), percentile(recorded, 50)
    overhead = ledger_p50 - bare_p50
    results = [
        row(
            "dispatch.ledger_overhead_p50",
            overhead,
            "ms",
            target=f"<= {TARGET_MS} ms",
            meets_target=overhead <= TARGET_MS,
            baseline=bare_p50,
            ratio=ledger_p50 / bare_p50,
            calls=calls,
        ),
        row(
            "dispatch.ledger_p99",
            percentile(recorded, 99),
            "ms",
            baseline=percentile(bare, 99),
            ratio=percentile(recorded, 99) / percentile(bare, 99),
            calls=calls,
        ),
    ]
    emit("dispatch_overhead", results, backend="sqlite", end_sync="full")


if __name__ == "__main__":
    main()
