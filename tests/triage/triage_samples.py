"""Shared verdict samples for the triage tests: the spec's reference verdict V0 (docs/triage.md §4)."""

from __future__ import annotations

import copy
import json
from typing import Any

V0_CANONICAL = (
    '{"code_fixes":[],"confidence":"high","evidence":[{"claim":"The scriptlet is byte-identical to the previous'
    ' release.","file":"tiny-demo.install","line":null,"rule_id":"R007"}],"package":"tiny-demo-bin",'
    '"proposed_changes":[{"kind":"suppression","reason":"Unchanged install scriptlet re-reported by the analysis.",'
    '"rule_id":"R007"}],"rationale":"The install scriptlet did not change in this update.","schema_version":1,'
    '"transition":{"new_commit":"b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2","new_version":"1.0.1-1",'
    '"old_commit":"a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1","old_version":"1.0.0-1"},"verdict":"FP"}'
)
V0_SHA256 = "260f694d794f3a7daf259619321bf1500a6d18cb5ad3918a71b3297585fbccc2"


def v0() -> dict[str, Any]:
    """A fresh, mutable copy of V0."""
    return copy.deepcopy(json.loads(V0_CANONICAL))


def tp_sample() -> dict[str, Any]:
    """The `tiny-typo` TP of docs/triage.md §16.1."""
    change = {
        "kind": "ioc",
        "confidence": "confirmed",
        "provenance": "AUR takedown 2026-01-14, maintainer report",
        "campaign": "tiny-typo-2026-01",
    }
    return {
        "schema_version": 1,
        "package": "tiny-typo",
        "verdict": "TP",
        "confidence": "high",
        "rationale": "The package fetches a second stage from a typosquatted host.",
        "transition": None,
        "evidence": [],
        "proposed_changes": [
            {**change, "type": "hash", "value": "854216ADD0A53613DB64D748EAC6731FB549C9ADA21B33CEAFEC83C6597F584D"},
            {**change, "type": "domain", "value": "Updates.Tiny-Typo-C2.net.", "confidence": "high"},
        ],
        "code_fixes": [],
    }
