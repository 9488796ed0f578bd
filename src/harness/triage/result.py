"""The fp_agent_verify result model (docs/triage.md §9): strict, every key present, unknown keys refused.

fp_agent_verify returns it; fp_agent_pr and fp_agent_alert validate their `result` input against it
with `parse_result` (shape only: truth rests on the ledger record of the verify call).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

CheckName = Literal[
    "schema", "aur_rpc", "snapshot", "check_phantom_install", "check_url_in_source", "no_check", "ioc_schema"
]
RpcOutcome = Literal["present", "absent", "mismatch", "unavailable"]
ReportKind = Literal["phantom_install", "url_in_source", "mixed"]
IocType = Literal["package", "domain", "hash", "file_path", "pkgbuild_pattern"]
IocConfidence = Literal["confirmed", "high", "medium"]

Sha256 = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
NoRules = Annotated[list[str], Field(max_length=0)]
OneRule = Annotated[list[str], Field(min_length=1, max_length=1)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class SchemaEvidence(_Strict):
    """Evidence of the `schema` check."""

    verdict_sha256: Sha256


class RpcEvidence(_Strict):
    """Evidence of the `aur_rpc` check: the RPC URL and what the AUR said (null where not known)."""

    url: str | None
    outcome: RpcOutcome
    name: str | None
    pkgbase: str | None
    version: str | None


class SnapshotEvidence(_Strict):
    """Evidence of the `snapshot` check: commits as cited, versions as found, raw file hashes."""

    old_commit: str | None
    new_commit: str | None
    old_version: str | None
    new_version: str | None
    pkgbuild_sha256_old: Sha256 | None
    pkgbuild_sha256_new: Sha256 | None
    srcinfo_sha256_old: Sha256 | None
    srcinfo_sha256_new: Sha256 | None


class PhantomEvidence(_Strict):
    """Evidence of `check_phantom_install` for one item (null where not reached)."""

    file: str
    line: int | None
    install_name: str | None
    declared_old: list[str] | None
    declared_new: list[str] | None
    old_sha256: Sha256 | None
    new_sha256: Sha256 | None
    identical: bool | None
    added_lines: int | None
    removed_lines: int | None


class UrlEvidence(_Strict):
    """Evidence of `check_url_in_source` for one item (null where not reached)."""

    file: str
    line: int | None
    url: str | None
    normalized_url: str | None
    host: str | None
    routable: bool | None
    declared: bool | None
    declared_in: list[Literal["PKGBUILD", ".SRCINFO"]] | None


class NoCheckEvidence(_Strict):
    """Evidence of `no_check`: the cited file and line."""

    file: str
    line: int | None


class IocEvidence(_Strict):
    """Evidence of one `ioc_schema` check; `index` is the change's position in `proposed_changes`."""

    index: int
    type: IocType
    value: str
    normalized_value: str | None


class _Check(_Strict):
    passed: bool
    reason: str


class SchemaCheck(_Check):
    """The verdict passed section 4."""

    name: Literal["schema"]
    rule_ids: NoRules
    evidence: SchemaEvidence


class RpcCheck(_Check):
    """The AUR RPC lookup of the package."""

    name: Literal["aur_rpc"]
    rule_ids: NoRules
    evidence: RpcEvidence


class SnapshotCheck(_Check):
    """The four package files at both commits, bound to the package and versions."""

    name: Literal["snapshot"]
    rule_ids: NoRules
    evidence: SnapshotEvidence


class PhantomCheck(_Check):
    """One evidence item routed to check_phantom_install."""

    name: Literal["check_phantom_install"]
    rule_ids: OneRule
    evidence: PhantomEvidence


class UrlCheck(_Check):
    """One evidence item routed to check_url_in_source."""

    name: Literal["check_url_in_source"]
    rule_ids: OneRule
    evidence: UrlEvidence


class NoCheck(_Check):
    """One evidence item whose rule has no deterministic check (always fails)."""

    name: Literal["no_check"]
    rule_ids: OneRule
    evidence: NoCheckEvidence


class IocCheck(_Check):
    """One `ioc` change checked against section 8."""

    name: Literal["ioc_schema"]
    rule_ids: NoRules
    evidence: IocEvidence


Check = Annotated[
    SchemaCheck | RpcCheck | SnapshotCheck | PhantomCheck | UrlCheck | NoCheck | IocCheck,
    Field(discriminator="name"),
]


class SuppressionRecord(_Strict):
    """One TrustSight suppression record (docs/triage.md §14.1) for a verified FP."""

    created_at: str = Field(pattern=r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T00:00:00\.000000Z$")
    created_at_obs: Literal[0]
    package: str
    reason: str = Field(min_length=1)
    requires_clear_indicators: Literal[True]
    rule_id: str
    ttl_observations: None


class ReportEntry(_Strict):
    """The one-line report of a verified FP."""

    package: str
    rules: list[str] = Field(min_length=1)
    kind: ReportKind
    summary: str = Field(min_length=1)


class IocEntry(_Strict):
    """One normalized indicator of a verified TP; null where the verdict left the key out."""

    type: IocType
    value: str
    confidence: IocConfidence
    provenance: str
    campaign: str | None
    incident: str | None
    expires_at: str | None
    note: str | None


class Snapshot(_Strict):
    """What the verification read: FP the PKGBUILD URL and raw hashes at new_commit, TP the RPC URL."""

    source_url: str | None
    pkgbuild_sha256: Sha256 | None
    srcinfo_sha256: Sha256 | None
    install_sha256: Sha256 | None
    install_name: str | None


class Result(_Strict):
    """The result of fp_agent_verify; every key is always present."""

    verified: bool = Field(description="True only for an FP or TP verdict whose every check ran and passed.")
    reason: str = Field(
        min_length=1, description="`all checks passed`, or the first failing check's reason in `checks` order."
    )
    verdict: Literal["FP", "TP", "uncertain"] = Field(description="The verdict as submitted.")
    package: str = Field(description="The package as submitted.")
    pkgbase: str = Field(description='The AUR package base when the RPC found the package, else "".')
    version_transition: str = Field(description="`<old> -> <new>`, `?` for an unknown side.")
    checks: list[Check] = Field(description="Every check in run order: {name, rule_ids, passed, reason, evidence}.")
    findings_table: str = Field(description='Markdown table of the evidence items and their checks, or "".')
    suppressions: list[SuppressionRecord] = Field(
        description="Verified FP: one suppression record per rule, sorted by rule id; else []."
    )
    report_entry: ReportEntry | None = Field(description="Verified FP: {package, rules, kind, summary}; else null.")
    ioc_entries: list[IocEntry] = Field(
        description="Verified TP: the normalized indicators sorted by (type, value); else []."
    )
    snapshot: Snapshot = Field(description="What was read: source_url and raw SHA-256 hashes, null where not reached.")
    verdict_document: dict[str, Any] = Field(description="The verdict as submitted.")
    verdict_sha256: Sha256 = Field(description="SHA-256 of the canonical JSON of verdict_document.")


def parse_result(document: Any) -> Result:
    """Validate a result object strictly (unknown keys and wrong types refused); raises pydantic.ValidationError."""
    return Result.model_validate(document, strict=True)
