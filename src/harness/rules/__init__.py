"""The operator-rule corpus: loading, pinning, parsing, caching and matching (docs/investigate.md §7)."""

from harness.rules.corpus import RULE_ID_RE, Corpus, CorpusError, Rule, clear_cache, load_corpus, parse_corpus
from harness.rules.match import matches, matching_rules, predicate_map, rules_by_id

__all__ = [
    "RULE_ID_RE",
    "Corpus",
    "CorpusError",
    "Rule",
    "clear_cache",
    "load_corpus",
    "matches",
    "matching_rules",
    "parse_corpus",
    "predicate_map",
    "rules_by_id",
]
