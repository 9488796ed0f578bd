"""Layer (b) of the redactor: RE2::Set passes over each text copy gate every rule (docs/decisions.md, "Redaction
engine", "Cold start").

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
# Text a gate runs cold over before it compiles its light patterns into one Set (see _Gate).
WARM_BYTES = 1 << 20
_REPEAT = re.compile(rb"\{(\d+)(?:,(\d+))?\}")

# (pattern, owner, a literal every match of the pattern contains)
Entry = tuple[bytes, int, bytes]


def repeat_weight(source: bytes) -> int:
    """The sum of the upper bounds of a pattern's counted repeats (what its compiled size grows with)."""
    return sum(int(match[2] or match[1]) for match in _REPEAT.finditer(source))


def _opens_with_literal(entry: Entry) -> bool:
    # Only a pattern that opens with its escaped literal is grouped under it: then every match holds the literal.
    source, _, literal = entry
    return bool(literal) and source.startswith(escape(literal))


def _heavy(entry: Entry) -> bool:
    return _opens_with_literal(entry) and repeat_weight(entry[0]) > HEAVY_REPEATS


class _Set:
    """One RE2::Set, compiled the first time a text needs it; `owners[i]` is what pattern i + 1 stands for."""

    __slots__ = ("_lock", "_set", "_sources", "owners")

    def __init__(self, entries: list[Entry]) -> None:
        self._sources = [source for source, _, _ in entries]
        self.owners = [owner for _, owner, _ in entries]
        self._set: Any = None
        self._lock = threading.Lock()

    def _compiled(self) -> Any:
        with self._lock:
            if self._set is None:
                compiled = re2.Set.SearchSet(re2_options(GATE_MAX_MEM))
                compiled.Add(_SENTINEL)
                for source in self._sources:
                    compiled.Add(source)
                compiled.Compile()
                self._set = compiled
            return self._set

    @property
    def compiled(self) -> bool:
        """Whether this Set has been compiled."""
        return self._set is not None

    def matched(self, text: bytes) -> set[int] | None:
        """The owners of every pattern that matches `text`; None when the pass failed."""
        found = (self._set or self._compiled()).Match(text) or ()
        if 0 not in found:
            return None
        owners = self.owners
        return {owners[index - 1] for index in found if index}


class _Passes:
    """Set passes over a text that report the owners of one group of gate patterns.

    `grouped` puts each pattern that opens with its literal in a Set of its own literal's patterns, run only on a
    text that holds the literal (one Aho-Corasick pass finds which do); the other patterns share one Set. A pattern
    cannot match where its literal is absent, so both report the owners one Set of every pattern reports.
    """

    __slots__ = ("_finder", "_groups", "_loose")

    def __init__(self, entries: list[Entry], grouped: bool) -> None:
        by_literal: dict[bytes, list[Entry]] = {}
        loose: list[Entry] = []
        for entry in entries:
            if grouped and _opens_with_literal(entry):
                by_literal.setdefault(entry[2], []).append(entry)
            else:
                loose.append(entry)
        ordered = sorted(by_literal)
        self._finder = ahocorasick_rs.BytesAhoCorasick(ordered) if ordered else None
        self._groups = tuple(_Set(by_literal[literal]) for literal in ordered)
        self._loose = _Set(loose) if loose else None

    def _sets(self) -> list[_Set]:
        return [*self._groups, *((self._loose,) if self._loose is not None else ())]

    def compiled_sets(self) -> int:
        """How many of these Sets have been compiled."""
        return sum(part.compiled for part in self._sets())

    def set_count(self) -> int:
        """How many Sets these passes may compile."""
        return len(self._sets())

    def matched(self, text: bytes) -> set[int] | None:
        """The owners of every pattern that matches `text`; None when a pass failed."""
        present: set[int] = set()
        if self._loose is not None:
            found = self._loose.matched(text)
            if found is None:
                return None
            present = found
        if self._finder is not None:
            groups = self._groups
            for index in {match[0] for match in self._finder.find_matches_as_indexes(text, overlapping=True)}:
                found = groups[index].matched(text)
                if found is None:
                    return None
                present |= found
        return present


class _Gate:
    """The gate patterns of one text copy: `matched` reports the owner (a detector index or a rule's keyword) of
    every pattern that matches a text.

    Compiling a Set of every pattern was most of a process's start (docs/decisions.md, "Cold start"), so a gate
    starts cold: each pattern that opens with its literal is compiled, with its literal's other patterns, only
    when a text holds that literal. A pass per literal present costs more per byte than one pass of every
    pattern, so once the gate has seen WARM_BYTES of text it compiles the light patterns into one Set and runs
    that. Heavy patterns stay grouped by literal in both. Every way reports the owners one Set would.
    """

    __slots__ = ("_cold", "_heavy", "_light", "_literals", "_seen", "_warm")

    def __init__(self, entries: list[Entry], literals: tuple[bytes, ...] = ()) -> None:
        # `literals`, when given, holds a literal that each pattern requires: without one of them in the text no
        # pattern can match, and the pass is skipped. One Aho-Corasick pass tells whether any occurs: it reports a
        # match exactly when some literal occurs, and costs a fifth of a `literal in text` loop (docs/decisions.md,
        # "Redaction throughput").
        self._literals = ahocorasick_rs.BytesAhoCorasick(list(literals)) if literals else None
        heavy = [entry for entry in entries if _heavy(entry)]
        self._light = [entry for entry in entries if not _heavy(entry)]
        self._heavy = _Passes(heavy, grouped=True)
        self._cold = _Passes(self._light, grouped=True)
        self._warm: _Passes | None = None
        # Bytes seen before the switch; threads may race on it, which only moves the switch, never an answer.
        self._seen = 0

    def warm(self) -> _Passes:
        """Switch to one Set of the light patterns now (what WARM_BYTES of text does); its passes."""
        if self._warm is None:
            self._warm = _Passes(self._light, grouped=False)
        return self._warm

    def sets(self) -> tuple[int, int]:
        """(Sets compiled so far, Sets there are): what this gate has cost the process."""
        passes = [self._cold, self._heavy, *((self._warm,) if self._warm is not None else ())]
        return sum(part.compiled_sets() for part in passes), sum(part.set_count() for part in passes)

    def _passes(self, size: int) -> _Passes:
        if self._warm is not None:
            return self._warm
        self._seen += size
        return self._cold if self._seen <= WARM_BYTES else self.warm()

    def matched(self, text: bytes) -> set[int] | None:
        """The owners of every pattern that matches `text`; None when a pass failed (everything must run)."""
        if self._literals is not None and not self._literals.find_matches_as_indexes(text):
            return set()
        light = self._passes(len(text)).matched(text)
        if light is None:
            return None
        heavy = self._heavy.matched(text)
        if heavy is None:
            return None
        return light | heavy


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
