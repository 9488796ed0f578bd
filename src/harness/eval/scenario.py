"""Eval scenarios (docs/eval.md): our YAML format, and mallcop's exam scenario format mapped onto it.

A scenario is data only: events, findings, a baseline, an optional rule corpus, the task text and the expected
action; a triage scenario instead carries an AUR fixture, the alert and the expected verdict. Nothing in it is
executed; it is loaded with the rule corpus's safe YAML loader.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from harness import files
from harness.aur.names import is_commit, is_package_name, is_scriptlet_name, is_version
from harness.rules.corpus import load_strict_yaml
from harness.text import canonjson

MAX_SCENARIO_BYTES = 4 * 1024 * 1024
ID_RE = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"


class ScenarioError(ValueError):
    """A scenario file that cannot be used, with the file and the problem."""


Verdict = Literal["FP", "TP", "uncertain"]
AUR_FILES = ("PKGBUILD", ".SRCINFO")
MAX_AUR_PACKAGES = 16


class Expected(BaseModel):
    """What a correct agent ends with. Investigation: the latest resolution of the finding, verified, with this
    action. Triage: the latest fp_agent_verify result with one of these verdicts, verified unless `uncertain`
    (which is never verified)."""

    model_config = ConfigDict(extra="forbid")

    action: Literal["resolve", "escalate"] | None = None
    verdict: list[Verdict] = Field(default_factory=list, description="One verdict, or the list of acceptable ones.")

    @field_validator("verdict", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @model_validator(mode="after")
    def _one_kind(self) -> Expected:
        if (self.action is None) == (not self.verdict):
            raise ValueError("give exactly one of expected.action (investigation) and expected.verdict (triage)")
        if len(set(self.verdict)) != len(self.verdict):
            raise ValueError("expected.verdict names a verdict twice")
        return self


class AurPackage(BaseModel):
    """One package of a loopback AUR: its RPC record and its files at each commit (text, served as they are)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    pkgbase: str = Field(default="", description="The package base (default: the name).")
    version: str = Field(description="The RPC record's Version.")
    on_rpc: bool = Field(default=True, description="false: the RPC knows no such package (taken down).")
    files: dict[str, dict[str, str]] = Field(description="commit -> file name -> content.")

    @model_validator(mode="after")
    def _names(self) -> AurPackage:
        for what, value in (("name", self.name), ("pkgbase", self.pkgbase or self.name)):
            if not is_package_name(value):
                raise ValueError(f"aur package {what} {value!r} is not a package name")
        if not is_version(self.version):
            raise ValueError(f"aur package {self.name}: version {self.version!r} is not a version")
        for commit, names in self.files.items():
            if not is_commit(commit):
                raise ValueError(f"aur package {self.name}: {commit!r} is not a commit id")
            for file in names:
                if file not in AUR_FILES and not is_scriptlet_name(file):
                    raise ValueError(f"aur package {self.name}: {file!r} is not a file name of an AUR tree")
        return self


class AlertFinding(BaseModel):
    """One finding of the watcher's alert: the rule that fired and where (docs/triage.md §14.3)."""

    model_config = ConfigDict(extra="forbid")

    rule_id: str = Field(min_length=1)
    file: str = Field(min_length=1)
    line: int | None = Field(default=None, ge=1)
    url: str = Field(default="", description="The URL the rule fired on, for the source-URL rules.")


class Alert(BaseModel):
    """The watcher alert of a triage scenario, as the agent receives it: the package, the transition it was
    raised on (versions and AUR commits) and its findings."""

    model_config = ConfigDict(extra="forbid")

    package: str
    old_version: str
    new_version: str
    old_commit: str
    new_commit: str
    findings: list[AlertFinding] = Field(min_length=1, max_length=64)


class AurFixture(BaseModel):
    """The AUR a triage scenario's pass serves on loopback (harness.eval.aur)."""

    model_config = ConfigDict(extra="forbid")

    packages: list[AurPackage] = Field(min_length=1, max_length=MAX_AUR_PACKAGES)


class Scenario(BaseModel):
    """One scenario in our format."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=ID_RE)
    title: str = Field(min_length=1)
    family: str = Field(min_length=1, description="The finding family probed (a rule corpus family).")
    kind: Literal["benign", "malicious", "ambiguous"]
    trap: str = Field(default="", description="What the scenario tests an agent for; documentation only.")
    task: str = Field(min_length=1, description="The task text the agent receives.")
    finding_id: str = Field(default="", description="The finding the task is about (investigation scenarios).")
    events: list[dict[str, Any]] = Field(default_factory=list)
    findings: list[dict[str, Any]] = Field(default_factory=list)
    baseline: dict[str, Any] | None = None
    rules: str | None = Field(default=None, description="A rule corpus (YAML text) instead of the embedded one.")
    aur: AurFixture | None = Field(default=None, description="The loopback AUR of a triage scenario.")
    alert: Alert | None = Field(default=None, description="The watcher alert a triage agent adjudicates.")
    expected: Expected
    time_limit_s: int = Field(default=60, ge=1, le=3600)

    @model_validator(mode="after")
    def _kind_fields(self) -> Scenario:
        if self.expected.verdict:
            if self.aur is None or self.alert is None:
                raise ValueError("a triage scenario (expected.verdict) needs aur and alert")
        elif not self.finding_id or not self.findings:
            raise ValueError("an investigation scenario (expected.action) needs finding_id and findings")
        elif self.aur is not None or self.alert is not None:
            raise ValueError("aur and alert belong to triage scenarios (expected.verdict)")
        return self

    @property
    def triage(self) -> bool:
        """Whether the agent is graded on a verdict (fp_agent_verify) rather than a resolution."""
        return bool(self.expected.verdict)

    @property
    def toolsets(self) -> str:
        """The toolsets the pass's server serves: triage scenarios get the triage tools, the others investigate."""
        return "triage" if self.triage else "investigate"

    def task_text(self) -> str:
        """What the agent is told: the task, and for a triage scenario the alert as canonical JSON after it."""
        if self.alert is None:
            return self.task
        return f"{self.task}\n\nAlert:\n{self.alert_json()}"

    def alert_json(self) -> str:
        """The alert as canonical JSON ("" for an investigation scenario)."""
        return canonjson.dumps(self.alert.model_dump()) if self.alert is not None else ""


def load_scenario(path: Path) -> Scenario:
    """One scenario file, in our format or mallcop's (told apart by mallcop's `detector` and `finding` keys)."""
    try:
        text = files.read_text(path, MAX_SCENARIO_BYTES, follow_symlinks=True)
    except files.FileRefused as exc:
        raise ScenarioError(str(exc)) from None
    try:
        document = load_strict_yaml(text)
    except ValueError as exc:
        raise ScenarioError(f"{path}: {exc}") from None
    if not isinstance(document, dict):
        raise ScenarioError(f"{path}: a scenario must be a YAML mapping")
    if "detector" in document and "finding" in document:
        document = from_mallcop(document)
    try:
        return Scenario.model_validate(document)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "scenario"
        raise ScenarioError(f"{path}: {where}: {first['msg']}") from None


def load_scenarios(paths: list[Path]) -> list[Scenario]:
    """Every scenario of the given files and directories (a directory: its *.yaml files, recursively, skipping
    names starting with `_`), sorted by id; two scenarios with one id are refused."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files += sorted(p for p in path.rglob("*.yaml") if not p.name.startswith("_"))
        else:
            files.append(path)
    scenarios: dict[str, Scenario] = {}
    for file in files:
        scenario = load_scenario(file)
        if scenario.id in scenarios:
            raise ScenarioError(f"{file}: scenario id {scenario.id} is used twice")
        scenarios[scenario.id] = scenario
    return [scenarios[key] for key in sorted(scenarios)]


# ---------------------------------------------------------------------------------------------
# mallcop's exam format (exams/scenarios/*.yaml of mallcop-app/mallcop; fields per its _schema.yaml)

_CHAIN_ACTION = {"resolved": "resolve", "escalated": "escalate", "resolve": "resolve", "escalate": "escalate"}
_EVENT_FIELDS = ("id", "timestamp", "source", "actor")


def _mallcop_event(event: Any) -> Any:
    """A mallcop event as our event: event_type is the type; action, target, severity, metadata and raw go in
    the payload (metadata stays nested, where EventView and resolve_finding read it)."""
    if not isinstance(event, dict):
        return event
    out = {key: event[key] for key in _EVENT_FIELDS if key in event}
    out["type"] = event.get("event_type", "")
    out["payload"] = {key: event[key] for key in ("action", "target", "severity", "metadata", "raw") if key in event}
    return out


def _kind(difficulty: str) -> str:
    if difficulty.startswith("benign"):
        return "benign"
    if difficulty.startswith("malicious"):
        return "malicious"
    return "ambiguous"


def _mallcop_baseline(baseline: Any) -> dict[str, Any] | None:
    if not isinstance(baseline, dict):
        return None
    known = baseline.get("known_entities") or {}
    return {
        "schema_version": 1,
        "known_actors": list(known.get("actors") or []),
        "frequency_tables": dict(baseline.get("frequency_tables") or {}),
        "relationships": dict(baseline.get("relationships") or {}),
    }


def from_mallcop(document: dict[str, Any]) -> dict[str, Any]:
    """Our scenario fields from a mallcop exam scenario: the finding's detector is its type (family), its title
    the reason, metadata.actor/source its actor and source; expected.chain_action (resolved/escalated) the
    action; trap_description (else ground_truth.trap) the trap. Fields with no counterpart (reasoning checks,
    connector tools, detection ground truth) are ignored."""
    finding = document.get("finding") if isinstance(document.get("finding"), dict) else {}
    metadata = finding.get("metadata") if isinstance(finding.get("metadata"), dict) else {}
    events = [_mallcop_event(e) for e in document.get("events") or []]
    timestamps = sorted(str(e.get("timestamp", "")) for e in events if isinstance(e, dict))
    expected = document.get("expected") if isinstance(document.get("expected"), dict) else {}
    ground = document.get("ground_truth") if isinstance(document.get("ground_truth"), dict) else {}
    title = str(finding.get("title") or document.get("id", ""))
    finding_id = str(finding.get("id", ""))
    return {
        "id": document.get("id"),
        "title": title,
        "family": document.get("detector"),
        "kind": _kind(str(document.get("difficulty", ""))),
        "trap": str(document.get("trap_description") or ground.get("trap") or ""),
        "task": f"Investigate finding {finding_id} ({title}). Resolve it only if an operator rule and the events "
        "support it; otherwise escalate. Record your decision with resolve_finding.",
        "finding_id": finding_id,
        "events": events,
        "findings": [
            {
                "id": finding_id,
                "source": f"detector:{finding.get('detector', document.get('detector', ''))}",
                "severity": str(finding.get("severity", "")),
                "type": str(finding.get("detector", document.get("detector", ""))),
                "actor": str(metadata.get("actor", "")),
                "timestamp": timestamps[-1] if timestamps else "",
                "reason": title,
                "event_ids": list(finding.get("event_ids") or []),
            }
        ],
        "baseline": _mallcop_baseline(document.get("baseline")),
        "expected": {"action": _CHAIN_ACTION.get(str(expected.get("chain_action", "")), expected.get("chain_action"))},
    }


def slug(text: str) -> str:
    """A file-name-safe form of a scenario id."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", text)
