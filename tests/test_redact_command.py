"""`harness redact`: what the ledger would store, from files or stdin, and `--explain` without the secret."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from harness.text.redact import RULESET_FINGERPRINT, RULESET_VERSION
from tests.e2e.procs import clean_env, harness_argv
from tests.runners import run_cli

PASSWORD = "Zq7pLm2Xv9Rt4Kw8"
TOKEN = "ghp_" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2"
TEXT = f"export DB_PASSWORD={PASSWORD}\nclone with {TOKEN} now\nnothing here\n"
WORKSPACE_RULE = """
[[rule]]
id = "acme_key"
number = 1000
provider = "Acme"
description = "An Acme API key"
class = "token"
examples = ["key acme_<<alnum:32>> here", "ACME=acme_<<alnum:32>>"]
negative_examples = ["the acme_ prefix"]

[[rule.detector]]
kind = "token"
literals = ["acme_"]
tail = "[A-Za-z0-9]{32}"
"""
ACME = "acme_" + "k3Y" * 10 + "x9"


def _file(tmp_path: Path, text: str = TEXT) -> Path:
    path = tmp_path / "input.txt"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_file_is_printed_as_the_ledger_would_store_it(tmp_path: Path) -> None:
    result = run_cli(["--workspace", str(tmp_path), "redact", str(_file(tmp_path))])
    assert result.exit_code == 0, result.stdout
    assert result.stdout == (
        "export DB_PASSWORD=[REDACTED:kv_secret]\nclone with [REDACTED:github_token] now\nnothing here\n"
    )


def test_explain_lists_rule_ids_and_spans_never_the_secret(tmp_path: Path) -> None:
    result = run_cli(["--workspace", str(tmp_path), "redact", "--explain", str(_file(tmp_path))])
    assert result.exit_code == 0
    assert PASSWORD not in result.stdout and TOKEN[4:] not in result.stdout
    document = result.json()
    assert document["ruleset_fingerprint"] == RULESET_FINGERPRINT
    assert document["ruleset_version"] == RULESET_VERSION
    [entry] = document["inputs"]
    assert entry["rules_hit"] == ["github_token", "kv_secret"]
    body = TEXT.encode()
    assert [(s["rule_id"], body[s["start"] : s["end"]].decode(), s["line"], s["column"]) for s in entry["spans"]] == [
        ("kv_secret", PASSWORD, 1, 20),
        ("github_token", TOKEN, 2, 12),
    ]


def test_stdin_with_a_known_secret_and_a_cap(tmp_path: Path) -> None:
    known = "Opaque-Value-From-The-Environment-77"
    text = f"the service said {known} and then a long tail " + "x" * 200
    argv = harness_argv("--workspace", str(tmp_path), "redact", "--cap", "100")
    proc = subprocess.run(argv, input=text.encode(), capture_output=True, env=clean_env(DEPLOY_API_TOKEN=known),
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.decode()
    assert out.startswith("the service said [REDACTED:known_secret] and then") and out.endswith("...[capped]")
    assert known not in out and len(out.encode()) <= 111


def test_workspace_rules_are_used_and_change_the_fingerprint(tmp_path: Path) -> None:
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "redaction.toml").write_text(WORKSPACE_RULE, encoding="utf-8")
    path = _file(tmp_path, f"key {ACME}\n")
    assert run_cli(["--workspace", str(tmp_path), "redact", str(path)]).stdout == "key [REDACTED:acme_key]\n"
    document = run_cli(["--workspace", str(tmp_path), "redact", "--explain", str(path)]).json()
    assert document["ruleset_fingerprint"] != RULESET_FINGERPRINT
    assert [span["rule_id"] for span in document["inputs"][0]["spans"]] == ["acme_key"]


def test_a_bad_workspace_rule_file_is_a_configuration_error(tmp_path: Path) -> None:
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "redaction.toml").write_text(WORKSPACE_RULE.replace("number = 1000", "number = 12"))
    result = run_cli(["--workspace", str(tmp_path), "redact", str(_file(tmp_path))])
    assert result.exit_code == 2
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "invalid_input"
    assert "redaction.toml: rule acme_key: field 'number' must be at least 1000" in error["message"]


def test_a_missing_file_is_invalid_input(tmp_path: Path) -> None:
    result = run_cli(["--workspace", str(tmp_path), "redact", str(tmp_path / "absent.txt")])
    assert result.exit_code == 2
    assert result.json()["error"]["code"] == "invalid_input" and "FILE:" in result.json()["error"]["message"]


def test_a_workspace_rule_keeps_its_secret_out_of_every_workspace_file(tmp_path: Path) -> None:
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "redaction.toml").write_text(WORKSPACE_RULE, encoding="utf-8")
    assert run_cli(["--workspace", str(tmp_path), "init", "--empty"]).exit_code == 0
    assert run_cli(["--workspace", str(tmp_path), "search_events", "--actor", ACME]).exit_code == 0
    files = [path for path in tmp_path.rglob("*") if path.is_file()]
    assert not [path for path in files if ACME.encode() in path.read_bytes()]
    assert b"[REDACTED:acme_key]" in (tmp_path / "ledger.sqlite3").read_bytes()
