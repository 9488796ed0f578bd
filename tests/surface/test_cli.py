"""The CLI front door: flags generated from the input model, JSON-or-file objects, errors as JSON."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from runners import run_cli

from harness.errors import EXIT_CODES


def test_flags_of_every_kind_reach_the_handler(cli) -> None:
    result = cli(
        "test_echo", "--required-name", "n", "--text", "hi", "--count", "2", "--loud",
        "--tags", "a", "--tags", "b", "--meta", '{"k": "v"}',
    )
    assert result.exit_code == 0, result.stdout
    assert result.stdout == (
        '{"count":2,"loud":true,"meta":{"k":"v"},"name":"n","notes":"","tags":["a","b"],"text":"HIHI"}\n'
    )
    assert result.stderr == ""


def test_defaults_apply_when_flags_are_absent(cli) -> None:
    assert cli("test_echo", "--required-name", "n").json() == {
        "count": 1, "loud": False, "meta": {}, "name": "n", "notes": "nothing to echo", "tags": [], "text": "",
    }


def test_no_flag_form_of_a_boolean(cli) -> None:
    assert cli("test_echo", "--required-name", "n", "--text", "a", "--no-loud").json()["text"] == "a"


def test_input_object_with_flags_overriding_its_keys(cli, tmp_path: Path) -> None:
    doc = tmp_path / "args.json"
    doc.write_text('{"required_name": "from-file", "text": "x", "count": 3}')
    result = cli("test_echo", "--input", str(doc), "--count", "1")
    assert result.json()["name"] == "from-file"
    assert result.json()["text"] == "x"
    inline = cli("test_echo", "--input", '{"required_name": "inline"}', "--required-name", "flag")
    assert inline.json()["name"] == "flag"


def test_object_flag_from_a_file(cli, tmp_path: Path) -> None:
    meta = tmp_path / "meta.json"
    meta.write_text('{"a": "1"}')
    assert cli("test_echo", "--required-name", "n", "--meta", str(meta)).json()["meta"] == {"a": "1"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--count", "two"], 'count: expected an integer, got "two"'),
        (["--count", "11"], "count: must be at most 10, got 11"),
        (["--text", "x" * 65], "text: must be at most 64 bytes (UTF-8), got 65"),
        (["--tags", "a", "--tags", "b", "--tags", "c", "--tags", "d", "--tags", "e"], "tags: must have at most 4 items, got 5"),
        (["--meta", '{"a": 1}'], "meta.a: expected a string, got an integer"),
        (["--meta", '{"a": "1", "a": "2"}'], 'meta: duplicate key "a" at $'),
        (["--meta", '{"a": '], "meta: malformed JSON"),
        (["--input", '{"required_name": "n", "eventType": "x"}'], "eventType: unknown field"),
        (["--input", "[1]"], "input: expected a JSON object"),
    ],
)
def test_bad_input_names_the_field(cli, args: list[str], message: str) -> None:
    result = cli("test_echo", "--required-name", "n", *args)
    assert result.exit_code == 2
    error = result.json()["error"]
    assert error["code"] == "invalid_input"
    assert error["operation"] == "test_echo"
    assert error["message"].startswith(message), error["message"]


def test_missing_required_field(cli) -> None:
    result = cli("test_echo", "--text", "x")
    assert result.exit_code == 2
    assert result.json()["error"]["message"] == "required_name: is required"


def test_unknown_flag_is_a_json_error_on_stdout(cli) -> None:
    result = cli("test_echo", "--required-name", "n", "--bogus", "1")
    assert result.exit_code == 2
    error = result.json()["error"]
    assert error["code"] == "invalid_input"
    assert "bogus" in error["message"]
    assert result.stdout.count("\n") == 1


def test_flag_missing_its_value(cli) -> None:
    result = cli("test_echo", "--required-name")
    assert result.exit_code == 2
    assert result.json()["error"]["code"] == "invalid_input"


def test_unknown_subcommand_is_unknown_operation(cli) -> None:
    result = cli("no_such_tool", "--x", "1")
    assert result.exit_code == 2
    assert result.json() == {
        "error": {"code": "unknown_operation", "message": 'unknown operation "no_such_tool"', "operation": "no_such_tool"}
    }


def test_unknown_global_option_is_a_json_error(cli) -> None:
    result = cli("--bogus-global", "test_echo")
    assert result.exit_code == 2
    assert result.json()["error"]["code"] == "invalid_input"


@pytest.mark.parametrize("code", ["invalid_input", "not_found", "refused", "upstream_unavailable", "internal_error"])
def test_handler_errors_map_to_codes_and_exit_statuses(cli, code: str) -> None:
    result = cli("test_fail", "--code", code)
    assert result.exit_code == EXIT_CODES[code]
    error = result.json()["error"]
    assert error["code"] == code
    assert error["operation"] == "test_fail"
    if code == "internal_error":
        assert "secret-looking" not in error["message"]
        assert "Traceback" in result.stderr


def test_object_file_over_the_cap_is_refused_before_reading(cli, tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    big.write_text('{"a": "' + "x" * 1_048_576 + '"}')
    result = cli("test_echo", "--required-name", "n", "--meta", str(big))
    assert result.exit_code == 2
    assert f'meta: file "{big}" is larger than 1,048,576 bytes' == result.json()["error"]["message"]


def test_inline_json_over_the_cap_is_refused(cli) -> None:
    result = cli("test_echo", "--input", '{"required_name": "' + "x" * 1_048_576 + '"}')
    assert result.exit_code == 2
    assert "over the 1048576-byte cap" in result.json()["error"]["message"]


def test_object_file_that_is_a_symlink_is_refused(cli, tmp_path: Path) -> None:
    target = tmp_path / "real.json"
    target.write_text('{"a": "1"}')
    link = tmp_path / "link.json"
    link.symlink_to(target)
    result = cli("test_echo", "--required-name", "n", "--meta", str(link))
    assert result.exit_code == 2
    assert result.json()["error"]["message"] == f'meta: file "{link}" is a symbolic link'


def test_object_file_not_utf8_is_refused(cli, tmp_path: Path) -> None:
    bad = tmp_path / "latin1.json"
    bad.write_bytes(b'{"a": "caf\xe9"}')
    result = cli("test_echo", "--required-name", "n", "--meta", str(bad))
    assert result.exit_code == 2
    assert "not valid UTF-8" in result.json()["error"]["message"]


def test_object_file_that_is_a_directory_or_missing(cli, tmp_path: Path) -> None:
    assert "not a regular file" in cli("test_echo", "--required-name", "n", "--meta", str(tmp_path)).json()["error"]["message"]
    missing = cli("test_echo", "--required-name", "n", "--meta", str(tmp_path / "nope.json"))
    assert missing.exit_code == 2
    assert "does not exist" in missing.json()["error"]["message"]


def test_pretty_output_indents_the_same_document(cli) -> None:
    compact = cli("test_echo", "--required-name", "n")
    pretty = cli("--pretty", "test_echo", "--required-name", "n")
    assert json.loads(pretty.stdout) == compact.json()
    assert pretty.stdout.startswith("{\n  ")


def test_operation_help_shows_description_flags_and_defaults(cli) -> None:
    result = cli("test_echo", "--help")
    assert result.exit_code == 0
    text = result.stdout
    assert "Echo the input back (test only)." in text
    for flag in ("--text", "--count", "--loud / --no-loud", "--tags", "--meta", "--required-name", "--input"):
        assert flag in text
    assert "[default: 1]" in text
    assert "[required]" in text


def test_group_help_lists_operations_and_commands(cli) -> None:
    text = cli("--help").stdout
    assert "test_echo" in text and "test_fail" in text
    assert "serve" in text and "schema" in text


def test_schema_prints_input_and_output(cli) -> None:
    doc = cli("schema", "test_echo").json()
    assert doc["input"]["additionalProperties"] is False
    assert doc["input"]["required"] == ["required_name"]
    assert set(doc["output"]["required"]) == {"text", "count", "loud", "tags", "meta", "name", "notes"}
    unknown = cli("schema", "nope")
    assert unknown.exit_code == 2
    assert unknown.json()["error"]["code"] == "unknown_operation"


def test_bad_configuration_names_section_and_key(cli, workspace: Path) -> None:
    (workspace / "harness.toml").write_text("[aur]\nbogus = 1\n")
    result = cli("test_echo", "--required-name", "n")
    assert result.exit_code == 2
    error = result.json()["error"]
    assert error["code"] == "invalid_input"
    assert "[aur] bogus: unknown key" in error["message"]


def test_bad_configuration_value(cli, workspace: Path) -> None:
    (workspace / "harness.toml").write_text('[ledger]\nend_sync = "sometimes"\n')
    result = cli("test_echo", "--required-name", "n")
    assert result.exit_code == 2
    assert '[ledger] end_sync: must be one of \'full\' or \'normal\', got "sometimes"' in result.json()["error"]["message"]


def test_stdout_is_exactly_one_document_on_success_and_error(cli) -> None:
    for args in (["test_echo", "--required-name", "n"], ["test_fail", "--code", "refused"], ["nope"]):
        out = cli(*args).stdout
        assert out.endswith("\n") and out.count("\n") == 1
        json.loads(out)
        assert out == out.rstrip(" \n") + "\n"


def test_environment_does_not_choose_the_workspace_when_a_flag_is_given(cli, workspace: Path, tmp_path: Path, monkeypatch) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "harness.toml").write_text("[bogus]\n")
    monkeypatch.setenv("HARNESS_ROOT", os.fspath(other))
    assert cli("test_echo", "--required-name", "n").exit_code == 0


def test_configured_secrets_never_leave_in_output(cli, monkeypatch) -> None:
    secret = "opaque-configured-secret-value-4242"
    monkeypatch.setenv("GITHUB_TOKEN", secret)
    ok = cli("test_echo", "--required-name", "n", "--text", f"x{secret}x")
    assert secret not in ok.stdout
    assert ok.json()["text"] == "x[REDACTED:known_secret]x"
    failed = cli("test_fail", "--code", "refused", "--message", f"upstream said {secret}")
    assert secret not in failed.stdout
    assert failed.json()["error"]["message"] == "upstream said [REDACTED:known_secret]"


ECHOING_SECRET = "Zk3p9QxV7mN2rT8w"  # MYAPP_API_KEY in the audit: every error below echoed it


@pytest.mark.parametrize(
    "args",
    [
        ["search_events", "--since", ECHOING_SECRET],
        ["search_events", "--limit", ECHOING_SECRET],
        ["search_events", "--input", f"/nowhere/{ECHOING_SECRET}.json"],
        [ECHOING_SECRET, "--x", "y"],
        [f"--bogus{ECHOING_SECRET}"],
        ["schema", ECHOING_SECRET],
        ["--baseline", f"/nowhere/{ECHOING_SECRET}", "check_baseline", "--entity", "x"],
        ["ingest", "events", f"/nowhere/{ECHOING_SECRET}"],
        ["ledger", "show", ECHOING_SECRET],
        ["ledger", "list", "--limit", ECHOING_SECRET],
        ["ledger", "list", "--since", ECHOING_SECRET],
        ["serve", "--http", ECHOING_SECRET],
        ["test_fail", "--code", "refused", "--message", ECHOING_SECRET],
    ],
)
def test_no_error_message_echoes_a_configured_secret(cli, monkeypatch, args: list[str]) -> None:
    from testops import FULL_REGISTRY

    monkeypatch.setenv("MYAPP_API_KEY", ECHOING_SECRET)
    result = cli(*args, registry=FULL_REGISTRY)
    assert result.exit_code != 0
    assert ECHOING_SECRET not in result.stdout + result.stderr
    assert "[REDACTED:known_secret]" in result.stdout


def test_a_configured_secret_in_a_bad_workspace_path_is_not_echoed(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("MYAPP_API_KEY", ECHOING_SECRET)
    bad = tmp_path / ECHOING_SECRET
    bad.mkdir()
    (bad / "harness.toml").write_text("[bogus]\n")
    result = run_cli(["--workspace", str(bad), "search_events"])
    assert result.exit_code == 2
    assert ECHOING_SECRET not in result.stdout + result.stderr
    assert "[REDACTED:known_secret]" in result.stdout


def test_a_short_configured_secret_is_removed_as_a_whole_token_only(cli, monkeypatch) -> None:
    monkeypatch.setenv("DB_PASSWORD", "Pw9x")
    result = cli("test_echo", "--required-name", "n", "--text", "Pw9x Pw9xy")
    assert result.json()["text"] == "[REDACTED:known_secret] Pw9xy"


@pytest.mark.parametrize(
    ("toml", "problem"),
    [
        ("[bogus]\n", "[bogus]: unknown section"),
        ('[store]\nindex_path = 3\n', "[store] index_path: expected a string"),
        ('[rules]\nsha256 = "abc"\n', "[rules] sha256: must be 64 hexadecimal digits"),
        ('[github]\napi_url = "http://api.github.com"\n', "[github] api_url: must be an https:// URL"),
        ('[ledger]\nurl = "postgresql://u:pw@db/x"\n', "[ledger] url: must not hold a password"),
        ('[ledger]\npool_max = 0\n', "[ledger] pool_max: must be at least 1, got 0"),
        ('[redaction]\nsecret_env = "X"\n', "[redaction] secret_env: expected an array, got a string"),
        ("not toml = = =\n", "harness.toml"),
    ],
)
def test_every_configuration_error_names_its_key(cli, workspace: Path, toml: str, problem: str) -> None:
    (workspace / "harness.toml").write_text(toml)
    result = cli("test_echo", "--required-name", "n")
    assert result.exit_code == 2
    assert problem in result.json()["error"]["message"]


def test_an_unusable_aur_section_does_not_stop_other_operations(cli, workspace: Path) -> None:
    (workspace / "harness.toml").write_text("[aur]\nmax_retries = 9\n")
    assert cli("test_echo", "--required-name", "n").exit_code == 0
