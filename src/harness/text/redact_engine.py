"""Layer (b) of the redactor: one RE2::Set pass per text copy gates every rule (docs/decisions.md, "Redaction engine").

Each detector names its gate patterns (its literal-first pattern, its cut form at the end of input, or
its literal); a detector runs only on text where one of them matches, and a rule with keywords only
where one of its keywords occurs. A Set can fail (RE2 stops a DFA that runs out of memory, and the
binding then reports no match); each Set therefore holds a pattern that matches every text at its
end, and a pass that does not report it runs every rule, so a failed gate costs time, never a secret.
"""

from __future__ import annotations

import re
import threading
from typing import Any

import ahocorasick_rs
import re2

from harness.text.redact_detectors import Anchored
from harness.text.redact_pattern import escape, re2_options
from harness.text.redact_rules import CATALOGUE, Rule, expand_example
from harness.text.redact_spans import CLASS_NAMES, Span

# The DFA budget of each gate Set: generous, so that a failed pass (handled above) stays the exception.
GATE_MAX_MEM = 256 << 20
_SENTINEL = rb"\z"
# A gate pattern whose counted repeats add up to more than this is "heavy": RE2 expands `{m,n}` into n copies, so
# compiling a Set costs its patterns' repeat bounds, and the ~150 heavy patterns (tails like `{16,512}`, the cut
# forms that repeat them) were 85% of the compile time every process paid at start (docs/decisions.md, "Cold start").
HEAVY_REPEATS = 128
_REPEAT = re.compile(rb"\{(\d+)(?:,(\d+))?\}")

# (pattern, owner, a literal every match of the pattern contains)
Entry = tuple[bytes, int, bytes]


def repeat_weight(source: bytes) -> int:
    """The sum of the upper bounds of a pattern's counted repeats (what its compiled size grows with)."""
    return sum(int(match[2] or match[1]) for match in _REPEAT.finditer(source))


def _heavy(entry: Entry) -> bool:
    # Only a pattern that opens with its literal moves to the heavy Set: then every match holds the literal.
    source, _, literal = entry
    return bool(literal) and source.startswith(escape(literal)) and repeat_weight(source) > HEAVY_REPEATS


class _Gate:
    """One RE2::Set over one text copy; `owners[i]` is what pattern i stands for (a detector index or a rule's keyword).

    Heavy patterns sit in a second Set, compiled the first time the text holds one of their literals: the first Set
    carries those literals as plain patterns, and a heavy pattern cannot match where its literal is absent, so the
    owners reported are the same as one Set's.
    """

    __slots__ = ("_guards_from", "_heavy", "_heavy_entries", "_literals", "_lock", "_set", "owners")

    def __init__(self, entries: list[Entry], literals: tuple[bytes, ...] = (), split: bool = True) -> None:
        # `literals`, when given, holds a literal that each pattern requires: without one of them in the text no
        # pattern can match, and the pass is skipped. One Aho-Corasick pass tells whether any occurs: it reports a
        # match exactly when some literal occurs, and costs a fifth of a `literal in text` loop (docs/decisions.md,
        # "Redaction throughput").
        self._literals = ahocorasick_rs.BytesAhoCorasick(list(literals)) if literals else None
        heavy: list[Entry] = []
        self._set = re2.Set.SearchSet(re2_options(GATE_MAX_MEM))
        self.owners: list[int] = []
        self._set.Add(_SENTINEL)
        for entry in entries:
            if split and _heavy(entry):
                heavy.append(entry)
            else:
                self._set.Add(entry[0])
                self.owners.append(entry[1])
        # Set indices from here on are the heavy patterns' literals.
        self._guards_from = len(self.owners) + 1
        for literal in sorted({literal for _, _, literal in heavy}):
            self._set.Add(escape(literal))
        self._set.Compile()
        self._heavy_entries = heavy
        self._heavy: _Gate | None = None
        self._lock = threading.Lock()

    def _heavy_gate(self) -> _Gate:
        with self._lock:
            if self._heavy is None:
                self._heavy = _Gate(self._heavy_entries, split=False)
            return self._heavy

    def matched(self, text: bytes) -> set[int] | None:
        """The owners of every pattern that matches `text`; None when the pass failed (everything must run)."""
        if self._literals is not None and not self._literals.find_matches_as_indexes(text):
            return set()
        found = self._set.Match(text) or ()
        if 0 not in found:
            return None
        owners, guards = self.owners, self._guards_from
        present = {owners[index - 1] for index in found if 0 < index < guards}
        if any(index >= guards for index in found):
            heavy = self._heavy_gate().matched(text)
            if heavy is None:
                return None
            present |= heavy
        return present


class ShapeEngine:
    """Runs the catalogue: each detector only where its gate matched, each rule only if its keywords let it."""

    __slots__ = ("_detectors", "_gates", "_keywords", "rules")

    def __init__(self, rules: tuple[Rule, ...]) -> None:
        self.rules = rules
        self._detectors = tuple((rule, detector) for rule in rules for detector in rule.detectors)
        lowered: list[Entry] = []
        original: list[Entry] = []
        # A mid-token anchor's gate opens with its `before` class, not a literal, so its threads are live at every
        # byte: beside ~500 literal-first patterns they multiplied the DFA states a fresh text needs (the pass was
        # 2-3x dearer until the states were cached; docs/decisions.md, "Redaction throughput"). Those patterns get a
        # Set of their own, run only where an anchor occurs (each pattern contains its anchor). Which Set holds a
        # pattern changes no answer.
        unanchored: list[Entry] = []
        anchors: set[bytes] = set()
        for index, (_, detector) in enumerate(self._detectors):
            for on_lowered, source in detector.gates():
                if on_lowered:
                    lowered.append((source, index, detector.literal.lower()))
                elif isinstance(detector, Anchored) and not source.startswith(escape(detector.literal)):
                    unanchored.append((source, index, detector.literal))
                    anchors.add(detector.literal)
                else:
                    original.append((source, index, detector.literal))
        # Keyword gates are owned by negative numbers: -1 - (the rule's position in `rules`).
        keywords: dict[int, frozenset[int]] = {}
        for position, rule in enumerate(rules):
            if rule.gates:
                owner = -1 - position
                lowered.extend((escape(keyword), owner, keyword) for keyword in rule.gates)
                keywords[rule.number] = frozenset((owner,))
        self._keywords = keywords
        # (gate, whether it runs on the lowered copy); a copy with no gate pattern needs no pass.
        gates = [(_Gate(lowered), True), (_Gate(original), False)]
        if unanchored:
            gates.append((_Gate(unanchored, tuple(sorted(anchors))), False))
        self._gates = tuple(gates)

    def spans(self, buf: bytes, lo: bytes) -> list[Span]:
        """Every shape span in `buf` (`lo` is `buf.lower()`)."""
        out: list[Span] = []
        detectors = self._detectors
        present: set[int] = set()
        for gate, on_lowered in self._gates:
            found = gate.matched(lo if on_lowered else buf)
            if found is None:
                for rule, detector in detectors:
                    detector.scan(buf, lo, rule, out)
                return out
            present |= found
        keywords = self._keywords
        for index in sorted(owner for owner in present if owner >= 0):
            rule, detector = detectors[index]
            gate = keywords.get(rule.number)
            if gate is None or not present.isdisjoint(gate):
                detector.scan(buf, lo, rule, out)
        return out

    def describe(self) -> list[dict[str, Any]]:
        """Canonical description of every rule for the fingerprint."""
        return [
            {
                "number": rule.number,
                "id": rule.rule_id,
                "class": CLASS_NAMES[rule.rank],
                "keywords": sorted(gate.decode() for gate in rule.gates),
                "detectors": [{**detector.describe(), "gates": [
                    {"on": "lowered" if on_lowered else "original", "pattern": source.decode("latin-1")}
                    for on_lowered, source in detector.gates()
                ]} for detector in rule.detectors],
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
