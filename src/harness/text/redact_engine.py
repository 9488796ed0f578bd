"""Layer (b) of the redactor: one Aho-Corasick pass over the lowered copy gates and anchors every rule."""

from __future__ import annotations

from typing import Any

import ahocorasick_rs

from harness.text.redact_rules import CATALOGUE, Rule, expand_example
from harness.text.redact_spans import CLASS_NAMES, Span


class ShapeEngine:
    """Runs the catalogue: each detector sees only the hits of its own literal, each rule only if gated in."""

    __slots__ = ("_automaton", "_gates", "_owners", "rules")

    def __init__(self, rules: tuple[Rule, ...]) -> None:
        self.rules = rules
        index: dict[bytes, int] = {}
        owners: list[list[tuple[Rule, Any]]] = []

        def slot(literal: bytes) -> int:
            literal = literal.lower()
            if literal not in index:
                index[literal] = len(owners)
                owners.append([])
            return index[literal]

        for rule in rules:
            for detector in rule.detectors:
                owners[slot(detector.literal)].append((rule, detector))
        self._gates = {rule.number: frozenset(slot(gate) for gate in rule.gates) for rule in rules if rule.gates}
        self._owners = tuple(tuple(entries) for entries in owners)
        self._automaton = ahocorasick_rs.BytesAhoCorasick(list(index))

    def spans(self, buf: bytes, lo: bytes) -> list[Span]:
        """Every shape span in `buf` (`lo` is `buf.lower()`)."""
        positions: dict[int, list[int]] = {}
        for slot, start, _ in self._automaton.find_matches_as_indexes(lo, overlapping=True):
            hits = positions.get(slot)
            if hits is None:
                positions[slot] = [start]
            else:
                hits.append(start)
        out: list[Span] = []
        present = positions.keys()
        for slot, hits in positions.items():
            for rule, detector in self._owners[slot]:
                gates = self._gates.get(rule.number)
                if gates is not None and present.isdisjoint(gates):
                    continue
                detector.scan(buf, lo, hits, rule, out)
        return out

    def describe(self) -> list[dict[str, Any]]:
        """Canonical description of every rule for the fingerprint."""
        return [
            {
                "number": rule.number,
                "id": rule.rule_id,
                "class": CLASS_NAMES[rule.rank],
                "gates": sorted(
                    {d.literal.lower().decode("latin-1") for d in rule.detectors} | {g.decode() for g in rule.gates}
                ),
                "detectors": [detector.describe() for detector in rule.detectors],
            }
            for rule in rules_in_order(self.rules)
        ]


def rules_in_order(rules: tuple[Rule, ...]) -> list[Rule]:
    """Rules sorted by catalogue number."""
    return sorted(rules, key=lambda rule: rule.number)


ENGINE = ShapeEngine(CATALOGUE)


def example_problems(rule: Rule) -> list[str]:
    """What is wrong with a rule's own examples: an example it finds nothing in, a negative it finds something in.

    Each example is expanded (`expand_example`) with three seeds; the rule runs alone, so a broader rule
    can neither hide nor stand in for it.
    """
    engine = ShapeEngine((rule,))
    problems = []
    for index, example in enumerate(rule.examples, 1):
        for seed in range(3):
            buf = expand_example(example, f"{rule.rule_id}:{index}:{seed}").encode("utf-8")
            if not engine.spans(buf, buf.lower()):
                problems.append(f"example {index} is not found by the rule (seed {seed})")
                break
    for index, negative in enumerate(rule.negative_examples, 1):
        buf = expand_example(negative, f"{rule.rule_id}:n{index}").encode("utf-8")
        if engine.spans(buf, buf.lower()):
            problems.append(f"negative example {index} is found by the rule")
    return problems
