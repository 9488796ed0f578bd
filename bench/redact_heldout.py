"""Held-out recall and benign alteration, ours beside detect-secrets measured in the same run on the same inputs.

Usage: python bench/redact_heldout.py [--quick]. The held-out set is tests/text/heldout_corpus.py (vendor key
formats, written apart from the rule examples); the benign corpus is tests/text/benign_corpus.py. A held-out
secret counts as found by ours when no 8-character run of its drawn body survives redaction, and by
detect-secrets when a secret it reports on a line of the text shares such a run with the body (it reports,
it does not redact). A benign line counts as altered when ours changes it, or detect-secrets reports on it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parent.parent)]

from _common import emit, row  # noqa: E402
from detect_secrets.core.scan import scan_line  # noqa: E402
from detect_secrets.settings import default_settings  # noqa: E402
from redact_vs_detect_secrets import theirs_flags  # noqa: E402

from harness.text.redact import KnownSecrets, build_redactor  # noqa: E402
from tests.text import benign_corpus  # noqa: E402
from tests.text.heldout_corpus import SURVIVOR_WINDOW, HeldOut, cases, survives  # noqa: E402

RECALL_TARGET = 0.97
BENIGN_TARGET = 0.01


def theirs_finds(case: HeldOut) -> bool:
    """Whether detect-secrets reports, on some line of the case, a value sharing a survivor-length run with a body."""
    windows = {body[i : i + SURVIVOR_WINDOW] for body in case.bodies if len(body) >= SURVIVOR_WINDOW
               for i in range(len(body) - SURVIVOR_WINDOW + 1)}
    for line in case.text.splitlines() or [case.text]:
        for secret in scan_line(line):
            value = secret.secret_value or ""
            if any(window in value for window in windows) or (len(value) >= SURVIVOR_WINDOW and any(
                    value in body for body in case.bodies)):
                return True
    return False


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="one seed instead of five")
    args = parser.parse_args(argv)
    red = build_redactor(KnownSecrets())
    held = [case for seed in range(1 if args.quick else 5) for case in cases(seed)]
    benign = benign_corpus.lines()
    with default_settings():
        ours_missed = [case for case in held if survives(case, red.redact(case.text))]
        theirs_found = sum(theirs_finds(case) for case in held)
        ours_altered = sum(red.redact(line) != line for line in benign)
        theirs_flagged = sum(theirs_flags(line) for line in benign)
        theirs_limited = sum(theirs_flags(line, entropy_limits=True) for line in benign)
    total = len(held)
    ours_recall = 1 - len(ours_missed) / total
    theirs_recall = theirs_found / total
    families = sorted({case.family for case in held})
    missed_families = sorted({case.family for case in ours_missed})
    results = [
        row(f"held-out recall, ours (of {total})", ours_recall, "fraction", target=f">= {RECALL_TARGET}",
            meets_target=ours_recall >= RECALL_TARGET, baseline=theirs_recall,
            ratio=ours_recall / theirs_recall if theirs_recall else None),
        row(f"held-out recall, detect-secrets (of {total})", theirs_recall, "fraction", target="reported"),
        row(f"benign lines altered, ours (of {len(benign)})", ours_altered / len(benign), "fraction",
            target=f"<= {BENIGN_TARGET}", meets_target=ours_altered / len(benign) <= BENIGN_TARGET,
            baseline=theirs_flagged / len(benign)),
        row(f"benign lines flagged, detect-secrets (of {len(benign)})", theirs_flagged / len(benign), "fraction",
            target="reported"),
        row(f"benign lines flagged, detect-secrets with entropy limits (of {len(benign)})", theirs_limited / len(benign),
            "fraction", target="reported"),
    ]
    emit("redact_heldout", results, quick=args.quick, families=len(families), missed_families=missed_families)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
