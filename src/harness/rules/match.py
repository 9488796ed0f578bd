"""Rule matching and the normalized predicate map (docs/investigate.md §7)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from harness.rules.corpus import Corpus, Rule
from harness.text.casefold import ci_equal, ci_key, normalize_key
from harness.text.sanitize import echo


def matches(rule: Rule, family: str, predicates: Mapping[str, str]) -> bool:
    """True when `family` is ci-equal to the rule's and every metadata_match entry is ci-equal in `predicates`.

    No trimming or coercion: `"TRUE"` matches `"true"`, `" true"` does not; a missing predicate never matches.
    """
    if not ci_equal(family, rule.family):
        return False
    for key, want in rule.metadata_match.items():
        have = predicates.get(key)
        if have is None or not ci_equal(have, want):
            return False
    return True


def matching_rules(corpus: Corpus, family: str, predicates: Mapping[str, str]) -> list[Rule]:
    """The rules of `corpus` matching `family` and `predicates`, in corpus order."""
    return [rule for rule in corpus.rules if matches(rule, family, predicates)]


def rules_by_id(corpus: Corpus, ids: Iterable[str]) -> tuple[list[Rule], list[str]]:
    """The rules whose id is ci-equal to one of `ids`, in corpus order, and the ids naming no rule.

    Each missing id is listed once, in its first spelling, in the order given.
    """
    by_key = {ci_key(rule.id): rule for rule in corpus.rules}
    wanted: set[str] = set()
    missing: list[str] = []
    for rule_id in ids:
        key = ci_key(rule_id)
        if key in wanted:
            continue
        wanted.add(key)
        if key not in by_key:
            missing.append(rule_id)
    return [rule for rule in corpus.rules if ci_key(rule.id) in wanted], missing


def predicate_map(finding_metadata: Mapping[str, str], flat: Mapping[str, str]) -> dict[str, str]:
    """Normalize `finding_metadata` keys, drop `""` values, then overlay the non-empty `flat` fields.

    Two metadata keys normalizing to the same name raise ValueError (the caller's invalid_input).
    """
    original: dict[str, str] = {}
    predicates: dict[str, str] = {}
    for key, value in finding_metadata.items():
        name = normalize_key(key)
        if name in original:
            raise ValueError(
                f"finding_metadata: keys {echo(original[name])} and {echo(key)} both normalize to {echo(name)}"
            )
        original[name] = key
        if value != "":
            predicates[name] = value
    for key, value in flat.items():
        if value != "":
            predicates[key] = value
    return predicates
