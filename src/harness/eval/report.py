"""The eval report (docs/eval.md): per scenario and overall pass rates, the median over passes, pass^k, tool-call
counts and failure classes, as JSON and a markdown table. Every figure but `timings` is a function of the grades,
so two runs of a deterministic agent give byte-identical reports once `timings` is set aside.

Harness errors (a pass whose harness side failed) count as passes not passed, but are reported apart from the
agent's failure classes: `harness_errors` beside `failures`, and their reasons under the markdown table."""

from __future__ import annotations

import statistics
from collections import Counter
from typing import Any

from harness.eval.grade import FAILURE_CLASSES, HARNESS_ERROR, Grade
from harness.eval.scenario import Scenario

SCHEMA_VERSION = 1


def _rate(passed: int, total: int) -> float:
    return round(passed / total, 4) if total else 0.0


def scenario_entry(scenario: Scenario, grades: list[Grade]) -> dict[str, Any]:
    """One scenario's row: its passes and their summary."""
    passed = sum(grade.passed for grade in grades)
    failures = Counter(grade.failure for grade in grades if grade.failure)
    return {
        "id": scenario.id,
        "family": scenario.family,
        "kind": scenario.kind,
        "expected_action": scenario.expected.action or "",
        "expected_verdict": list(scenario.expected.verdict),
        "passes": [grade.as_dict() for grade in grades],
        "pass_rate": _rate(passed, len(grades)),
        "pass_all": passed == len(grades),
        "median_tool_calls": statistics.median(sum(g.tool_calls.values()) for g in grades) if grades else 0,
        "failures": {name: failures[name] for name in FAILURE_CLASSES if failures[name]},
        "harness_errors": failures[HARNESS_ERROR],
    }


def build_report(agent: str, passes: int, results: list[tuple[Scenario, list[Grade]]],
                 timings: dict[str, list[float]]) -> dict[str, Any]:
    """The whole report; `timings` (seconds per scenario pass) is its only run-dependent part."""
    scenarios = [scenario_entry(scenario, grades) for scenario, grades in results]
    per_pass = [
        _rate(sum(grades[index].passed for _, grades in results), len(results)) for index in range(passes)
    ]
    all_grades = [grade for _, grades in results for grade in grades]
    failures = Counter(grade.failure for grade in all_grades if grade.failure)
    said_resolve = [grade for grade in all_grades if grade.proposed_action == "resolve"]
    return {
        "schema_version": SCHEMA_VERSION,
        "agent": agent,
        "passes": passes,
        "scenarios": scenarios,
        "overall": {
            "scenarios": len(results),
            "pass_rate": _rate(sum(g.passed for g in all_grades), len(all_grades)),
            "pass_rate_per_pass": per_pass,
            "median_pass_rate": statistics.median(per_pass) if per_pass else 0.0,
            "pass_hat_k": _rate(sum(entry["pass_all"] for entry in scenarios), len(scenarios)),
            "said_resolve": len(said_resolve),
            "resolve_verified": sum(grade.verified for grade in said_resolve),
            "tool_calls": sum(sum(g.tool_calls.values()) for g in all_grades),
            "failures": {name: failures[name] for name in FAILURE_CLASSES if failures[name]},
            "harness_errors": failures[HARNESS_ERROR],
        },
        "timings": {key: [round(value, 3) for value in values] for key, values in sorted(timings.items())},
    }


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(report: dict[str, Any]) -> str:
    """The report as a markdown table (no timings), one row per scenario and a total row."""
    k = report["passes"]
    lines = [
        f"| scenario | family | kind | expected | pass rate | pass^{k} | said (verified) | tool calls (median) | failures "
        "| harness errors |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    reasons = []
    for entry in report["scenarios"]:
        said = ", ".join(
            "harness error" if p["failure"] == HARNESS_ERROR
            else f"{p['proposed_action'] or p['proposed_verdict'] or 'none'} ({'yes' if p['verified'] else 'no'})"
            for p in entry["passes"]
        )
        reasons += [
            f"- {_cell(entry['id'])} pass {index}: {_cell(p['reason'])}"
            for index, p in enumerate(entry["passes"], 1) if p["failure"] == HARNESS_ERROR
        ]
        failures = ", ".join(f"{name} x{count}" for name, count in entry["failures"].items()) or "-"
        expected = entry["expected_action"] or " or ".join(entry["expected_verdict"])
        lines.append(
            f"| {_cell(entry['id'])} | {_cell(entry['family'])} | {entry['kind']} | {expected} | "
            f"{entry['pass_rate']:.2f} | {'yes' if entry['pass_all'] else 'no'} | {said} | "
            f"{entry['median_tool_calls']} | {failures} | {entry['harness_errors']} |"
        )
    overall = report["overall"]
    failures = ", ".join(f"{name} x{count}" for name, count in overall["failures"].items()) or "-"
    lines.append(
        f"| **all {overall['scenarios']}** | | | | {overall['pass_rate']:.2f} (median {overall['median_pass_rate']:.2f}) | "
        f"{overall['pass_hat_k']:.2f} | resolve {overall['said_resolve']} ({overall['resolve_verified']} verified) | "
        f"{overall['tool_calls']} | {failures} | {overall['harness_errors']} |"
    )
    if reasons:
        lines += ["", "Harness errors (the pass measured nothing about the agent):", "", *reasons]
    return "\n".join(lines) + "\n"
