"""Issue 8 item 4: identifiers pass unchanged; the share of benign lines altered stays at most 1%."""

from __future__ import annotations

import json

import pytest

from harness.text.redact import KnownSecrets, build_redactor
from tests.text import benign_corpus
from tests.text.redact_fixtures import BY_NUMBER

REDACTOR = build_redactor(KnownSecrets())
LINES = benign_corpus.lines()


def altered() -> list[str]:
    return [line for line in LINES if REDACTOR.redact(line) != line]


def test_at_most_one_percent_of_benign_lines_are_altered() -> None:
    changed = altered()
    share = len(changed) / len(LINES)
    print(f"benign corpus: {len(changed)} of {len(LINES)} lines altered ({share:.2%})")
    assert len(LINES) > 250
    assert share <= 0.01, changed


@pytest.mark.parametrize(
    "record",
    benign_corpus.CLOUDTRAIL_RECORDS + benign_corpus.OKTA_RECORDS + benign_corpus.GITHUB_RECORDS,
)
def test_written_audit_records_pass_unchanged(record: dict[str, object]) -> None:
    line = json.dumps(record)
    assert REDACTOR.redact(line) == line


def test_sample_data_passes_unchanged() -> None:
    for sample in sorted(benign_corpus.SAMPLES.iterdir()):
        text = sample.read_text(encoding="utf-8")
        assert REDACTOR.redact(text) == text, sample.name


def test_secrets_planted_in_benign_records_are_still_removed() -> None:
    token = BY_NUMBER[37].secret(5)
    record = json.loads(json.dumps(benign_corpus.CLOUDTRAIL_RECORDS[0]))
    record["requestParameters"]["clientToken"] = token
    record["errorMessage"] = f"login failed for password={token}"
    out = REDACTOR.redact(json.dumps(record))
    assert token not in out
    assert benign_corpus.SECRET_ARN in out and benign_corpus.REQUEST_ID in out
