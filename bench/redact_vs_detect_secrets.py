"""Our redactor beside detect-secrets 1.5 (docs/ledger.md §15): speed, rule fixtures caught, benign lines flagged.

Usage: python bench/redact_vs_detect_secrets.py [--quick]. detect-secrets is a bench extra only (the
package never imports it); it runs with its default plugins, `scan_line` per line, on the same input.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parent.parent)]

from _common import emit, row  # noqa: E402
from detect_secrets.core.scan import scan_line  # noqa: E402
from detect_secrets.settings import (
    default_settings,  # noqa: E402
    get_plugins,  # noqa: E402
)
from redact_bench import corpus, known_secrets  # noqa: E402

from harness.text.redact import Redactor, build_redactor  # noqa: E402
from tests.text.redact_fixtures import FIXTURES, RuleFixture, benign_corpus  # noqa: E402


def theirs_flags(text: str, entropy_limits: bool = False) -> bool:
    """Whether detect-secrets reports anything on any line of `text`.

    `scan_line` is its ad-hoc mode, which reports every high-entropy candidate; with `entropy_limits`,
    candidates under their plugin's entropy limit are dropped, as a file scan would.
    """
    limits = {plugin.secret_type: plugin for plugin in get_plugins() if hasattr(plugin, "entropy_limit")}
    for line in text.splitlines() or [text]:
        for secret in scan_line(line):
            plugin = limits.get(secret.type)
            if not entropy_limits or plugin is None:
                return True
            if plugin.calculate_shannon_entropy(secret.secret_value or "") > plugin.entropy_limit:
                return True
    return False


def ours_flags(red: Redactor, text: str) -> bool:
    """Whether our redactor changes `text`."""
    return red.redact(text) != text


def _mbps(func: Callable[[str], object], lines: list[str]) -> float:
    total = sum(len(line.encode("utf-8")) for line in lines)
    start = time.perf_counter()
    for line in lines:
        func(line)
    return total / (time.perf_counter() - start) / 1e6


def fixture_texts(fixture: RuleFixture) -> tuple[list[str], list[str]]:
    """A rule's positives (every syntax, seed 0) and its three truncations of the first syntax."""
    secret = fixture.secret()
    positives = [p.template.replace("{s}", secret) for p in fixture.positives]
    before = fixture.positives[0].split()[0]
    keep, size = fixture.keep, len(secret)
    truncated = [before + secret[:cut] for cut in (keep + 1, keep + (size - keep) // 2, size - 1)]
    return positives, truncated


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a seconds-long smoke run")
    args = parser.parse_args(argv)
    red = build_redactor(known_secrets())
    lines = [line for line in corpus(60_000 if args.quick else 1_000_000).splitlines() if line]
    benign = [line for seed in range(2 if args.quick else 20) for text in benign_corpus(seed) for line in text.splitlines() if line]
    with default_settings():
        ours_speed = _mbps(red.redact, lines)
        theirs_speed = _mbps(lambda line: list(scan_line(line)), lines)
        per_rule = []
        totals = {"positives": [0, 0, 0, 0], "truncated": [0, 0, 0, 0]}
        for fixture in FIXTURES:
            positives, truncated = fixture_texts(fixture)
            entry = {"rule": fixture.number, "id": fixture.rule_id}
            for kind, texts in (("positives", positives), ("truncated", truncated)):
                counts = (
                    len(texts),
                    sum(ours_flags(red, text) for text in texts),
                    sum(theirs_flags(text) for text in texts),
                    sum(theirs_flags(text, entropy_limits=True) for text in texts),
                )
                entry[kind] = dict(zip(("total", "ours", "detect_secrets", "detect_secrets_entropy_limits"), counts))
                totals[kind] = [a + b for a, b in zip(totals[kind], counts)]
            per_rule.append(entry)
        benign_ours = sum(ours_flags(red, line) for line in benign)
        benign_theirs = sum(theirs_flags(line) for line in benign)
        benign_limited = sum(theirs_flags(line, entropy_limits=True) for line in benign)
    results = [
        row("throughput per line, ours", ours_speed, "MB/s", target="reported", baseline=theirs_speed,
            ratio=ours_speed / theirs_speed),
        row("throughput per line, detect-secrets", theirs_speed, "MB/s", target="reported"),
    ]
    for kind, (total, ours, theirs, limited) in totals.items():
        results.append(row(f"rule {kind} flagged, ours (of {total})", ours, "texts", target="reported", baseline=theirs,
                           ratio=ours / theirs if theirs else None))
        results.append(row(f"rule {kind} flagged, detect-secrets (of {total})", theirs, "texts", target="reported"))
        results.append(row(f"rule {kind} flagged, detect-secrets with entropy limits (of {total})", limited, "texts",
                           target="reported"))
    results.append(row(f"benign lines flagged, ours (of {len(benign)})", benign_ours, "lines", target="reported",
                       baseline=benign_theirs))
    results.append(row(f"benign lines flagged, detect-secrets (of {len(benign)})", benign_theirs, "lines",
                       target="reported"))
    results.append(row(f"benign lines flagged, detect-secrets with entropy limits (of {len(benign)})", benign_limited,
                       "lines", target="reported"))
    emit("redact_vs_detect_secrets", results, quick=args.quick, per_rule=per_rule)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
