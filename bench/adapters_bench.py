"""Adapter ingest benchmark (issue 15): a CloudTrail JSON Lines file through `--format cloudtrail`, beside the
harness-shape ingest of the same events measured in the same run, each in its own process (peak RSS, wall).

    .venv/bin/python bench/adapters_bench.py [--quick] [--events N]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine, row  # noqa: E402

from harness.adapters import ADAPTERS  # noqa: E402
from harness.store import Store  # noqa: E402
from harness.store.ingest import ingest_files

PEAK_RSS_MIB = 512
RATIO = 1.5


def cloudtrail_record(n: int) -> dict[str, Any]:
    user = f"user{n % 500}"
    return {
        "eventVersion": "1.09",
        "eventID": f"{n:08x}-0000-4000-8000-000000000000",
        "eventTime": f"2026-04-{1 + n % 28:02d}T{n % 24:02d}:{n % 60:02d}:{n // 60 % 60:02d}Z",
        "eventSource": "s3.amazonaws.com",
        "eventName": ("GetObject", "PutObject", "ConsoleLogin")[n % 3],
        "eventType": "AwsApiCall",
        "awsRegion": "us-east-1",
        "sourceIPAddress": f"203.0.{n % 256}.{n // 256 % 256}",
        "userAgent": "aws-cli/2.15.30",
        "recipientAccountId": "111122223333",
        "userIdentity": {
            "type": "IAMUser",
            "principalId": f"AIDA{n % 500:08d}",
            "arn": f"arn:aws:iam::111122223333:user/{user}",
            "accountId": "111122223333",
            "userName": user,
        },
        "requestParameters": {"bucketName": "payments-artifacts", "key": f"build/{n}.tar.gz"},
    }


def generate(directory: Path, count: int) -> tuple[Path, Path]:
    vendor, harness = directory / "cloudtrail.jsonl", directory / "harness.jsonl"
    convert = ADAPTERS["cloudtrail"].to_event
    with vendor.open("w") as v, harness.open("w") as h:
        for n in range(count):
            rec = cloudtrail_record(n)
            v.write(json.dumps(rec, separators=(",", ":")) + "\n")
            h.write(json.dumps(convert(rec), separators=(",", ":")) + "\n")
    return vendor, harness


def child(args: list[str]) -> tuple[float, float]:
    """(wall seconds, peak RSS MiB) of this script run as a child with `args`."""
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, __file__, *args], stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"child {args} failed with status {status}")
    return time.perf_counter() - started, usage.ru_maxrss / 1024


def child_ingest(store_path: str, format_name: str, path: str) -> None:
    ingest_files(Store(Path(store_path)), "events", [path], stderr=io.StringIO(), format_name=format_name)


def run(count: int) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="harness-adapters-bench-") as tmp:
        root = Path(tmp)
        vendor, harness = generate(root, count)
        base_wall, base_rss = child(["--child-ingest", str(root / "harness-store"), "harness", str(harness)])
        wall, rss = child(["--child-ingest", str(root / "vendor-store"), "cloudtrail", str(vendor)])
    return [
        row(
            "cloudtrail_ingest_peak_rss",
            rss,
            "MiB",
            target=f"<= {PEAK_RSS_MIB} MiB and <= {RATIO}x the harness shape",
            meets_target=rss <= PEAK_RSS_MIB and rss <= RATIO * base_rss,
            baseline=base_rss,
            ratio=rss / base_rss,
            events=count,
        ),
        row(
            "cloudtrail_ingest_wall",
            wall,
            "s",
            target="reported beside the harness-shape ingest",
            meets_target=True,
            baseline=base_wall,
            ratio=wall / base_wall,
            events=count,
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few thousand records, for a smoke test")
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--child-ingest", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_ingest:
        child_ingest(*args.child_ingest)
        return
    count = 2000 if args.quick else args.events
    print(json.dumps({"bench": "adapters", "machine": machine(), "results": run(count)}, sort_keys=True))


if __name__ == "__main__":
    main()
