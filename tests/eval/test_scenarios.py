"""Eval scenarios (docs/eval.md): the shipped corpus loads and covers the rule families, the loader refuses unsafe
or malformed YAML, and mallcop's exam format maps onto ours."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest

from harness.eval.scenario import ScenarioError, load_scenario, load_scenarios
from harness.rules import load_corpus

CORPUS = Path(__file__).resolve().parents[2] / "src" / "harness" / "eval" / "scenarios"


def test_the_corpus_has_30_or_more_scenarios_across_every_rule_family_benign_and_malicious() -> None:
    scenarios = load_scenarios([CORPUS])
    assert len(scenarios) >= 30
    families = {rule.family for rule in load_corpus(explicit=None, workspace=CORPUS, pin=None).rules}
    kinds = Counter((s.family, s.kind) for s in scenarios)
    for family in families:
        assert kinds[(family, "benign")] and kinds[(family, "malicious")], family
    traps = " ".join(s.id for s in scenarios)
    for trap in ("known-actor", "hallucinated-window", "unsupported", "injection-payload", "injection-package-file"):
        assert trap in traps


MALLCOP = """\
id: XX-01-window
failure_mode: CS
detector: unusual-timing
category: behavioral
difficulty: benign-obvious
trap_description: 'The timestamp looks odd; the metadata says maintenance.'
finding:
  id: fnd_1
  detector: unusual-timing
  title: 'Unusual timing: svc at 02:00'
  severity: warn
  event_ids: [evt_1]
  metadata: {actor: svc, source: azure, event_type: container_restart}
events:
- id: evt_1
  timestamp: '2026-03-10T02:00:00Z'
  source: azure
  event_type: container_restart
  actor: svc
  action: restart_container
  target: app-1
  metadata: {maintenance_window: 'true'}
  raw: {}
baseline:
  known_entities: {actors: [svc]}
  frequency_tables: {'azure:container_restart:svc': 5}
expected:
  chain_action: resolved
  triage_action: escalated
  reasoning_must_mention: [maintenance]
"""


def test_mallcop_exam_scenarios_map_onto_ours(tmp_path: Path) -> None:
    path = tmp_path / "XX-01.yaml"
    path.write_text(MALLCOP)
    scenario = load_scenario(path)
    assert (scenario.id, scenario.family, scenario.kind, scenario.expected.action) == (
        "XX-01-window", "unusual-timing", "benign", "resolve"
    )
    assert scenario.trap == "The timestamp looks odd; the metadata says maintenance."
    (finding,) = scenario.findings
    assert finding == {
        "id": "fnd_1",
        "source": "detector:unusual-timing",
        "severity": "warn",
        "type": "unusual-timing",
        "actor": "svc",
        "timestamp": "2026-03-10T02:00:00Z",
        "reason": "Unusual timing: svc at 02:00",
        "event_ids": ["evt_1"],
    }
    assert scenario.events[0]["type"] == "container_restart"
    assert scenario.events[0]["payload"]["metadata"] == {"maintenance_window": "true"}
    assert scenario.baseline == {
        "schema_version": 1,
        "known_actors": ["svc"],
        "frequency_tables": {"azure:container_restart:svc": 5},
        "relationships": {},
    }


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("id: x\n!!python/object/apply:os.system ['true']: 1\n", "tag"),
        ("a: &anchor 1\nb: *anchor\n", "anchors are not allowed"),
        ("id: a\nid: b\n", "duplicate key"),
        ("- just a list\n", "a scenario must be a YAML mapping"),
        ("id: x\ntitle: t\n", "family"),
    ],
)
def test_the_loader_refuses_unsafe_or_malformed_files(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ScenarioError, match=problem):
        load_scenario(path)


def test_a_scenario_is_read_as_harness_files_reads_any_named_file(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    # A FIFO named like a scenario is refused before it is opened for reading, which would block.
    with pytest.raises(ScenarioError) as raised:
        load_scenario(fifo)
    assert str(raised.value) == f'file "{fifo}" is not a regular file'
    latin = tmp_path / "latin.yaml"
    latin.write_bytes(b"id: caf\xe9\n")
    with pytest.raises(ScenarioError) as raised:
        load_scenario(latin)
    assert str(raised.value) == f'file "{latin}" is not valid UTF-8 (byte 7)'
