"""The rule corpus and predicate map as the investigate operations see them (docs/investigate.md §7).

lookup_rules and the search_events fold share this module, so both select the same corpus, build the same
predicate map and return the same Rule shape; each decides what a corpus error means to it (an
`upstream_unavailable` error or a note).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Annotated

from pydantic import AfterValidator, BaseModel, Field

from harness.context import Context
from harness.errors import InvalidInput
from harness.fields import BoundedStr, ObjectInput
from harness.rules import Corpus, Rule, load_corpus, predicate_map
from harness.text.sanitize import echo

MAX_METADATA_ENTRIES = 64
MAX_METADATA_KEY_BYTES = 128
MAX_METADATA_VALUE_BYTES = 1024


def _check_entries(value: dict[str, str]) -> dict[str, str]:
    if len(value) > MAX_METADATA_ENTRIES:
        raise ValueError(f"must have at most {MAX_METADATA_ENTRIES} entries, got {len(value)}")
    return value


# The `finding_metadata` input of search_events and lookup_rules (docs/investigate.md §9.1): string values only,
# so `true` is refused rather than coerced to "true".
FindingMetadata = Annotated[
    dict[BoundedStr(MAX_METADATA_KEY_BYTES), BoundedStr(MAX_METADATA_VALUE_BYTES)],
    Field(json_schema_extra={"maxProperties": MAX_METADATA_ENTRIES}),
    AfterValidator(_check_entries),
    ObjectInput(),
]


class AppliesTo(BaseModel):
    """When a rule applies: the finding family and the predicates it needs."""

    family: str = Field(description="Finding family the rule is for (compared ignoring case).")
    metadata_match: dict[str, str] = Field(
        description="Predicates that must all be asserted, each ignoring case; {} when the family alone decides."
    )


class RuleView(BaseModel):
    """One operator rule (docs/investigate.md §2 Rule)."""

    id: str = Field(description="Rule id, e.g. R-001.")
    applies_to: AppliesTo = Field(description="The family and predicates the rule needs.")
    operator_directive: str = Field(description="What the operators decided to do in this case.")


def corpus(ctx: Context) -> Corpus:
    """The corpus from `--rules`, else the workspace file, else the embedded one; raises CorpusError."""
    settings = ctx.settings
    return load_corpus(explicit=settings.rules_path, workspace=settings.workspace, pin=settings.rules_pin or None)


def predicates(finding_metadata: Mapping[str, str], flat: Mapping[str, str] | None = None) -> dict[str, str]:
    """The predicate map of `finding_metadata` overlaid with the non-empty `flat` fields.

    Two metadata keys normalizing alike are invalid_input: `finding_metadata: keys "<a>" and "<b>" both ...`.
    """
    try:
        return predicate_map(finding_metadata, flat or {})
    except ValueError as exc:
        raise InvalidInput(str(exc)) from None


def views(rules: Iterable[Rule]) -> list[RuleView]:
    """Rules in the output shape, order kept."""
    return [RuleView.model_validate(rule.to_json()) for rule in rules]


def no_match_note(family: str) -> str:
    """The note of a lookup or a fold in which no rule matched `family` with the predicates (one wording for both)."""
    return f"no operator rule matched family {echo(family)} with the supplied predicates"
