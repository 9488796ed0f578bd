"""The `[telemetry]` keys and the OTel variables the harness reads (README "Tracing", configuration table)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.config import ConfigError, Overrides, load_settings
from harness.context import build_context


def settings(tmp_path: Path, toml: str = "", **env: str):
    (tmp_path / "harness.toml").write_text(toml)
    return load_settings(Overrides(workspace=tmp_path), env)


def test_off_by_default(tmp_path: Path) -> None:
    telemetry = settings(tmp_path).telemetry
    assert not telemetry.enabled and telemetry.content is False


def test_the_config_endpoint_and_its_signal_urls(tmp_path: Path) -> None:
    telemetry = settings(tmp_path, '[telemetry]\nendpoint = "https://collector.example:4318/otlp/"\ncontent = true\n').telemetry
    assert telemetry.enabled and telemetry.content
    assert telemetry.traces_url == "https://collector.example:4318/otlp/v1/traces"
    assert telemetry.metrics_url == "https://collector.example:4318/otlp/v1/metrics"


def test_the_environment_wins_and_otel_sdk_disabled_turns_it_off(tmp_path: Path) -> None:
    toml = '[telemetry]\nendpoint = "http://from-config:4318"\n'
    env = settings(tmp_path, toml, OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:4318").telemetry
    assert env.endpoint == "http://127.0.0.1:4318"
    assert settings(tmp_path, toml).telemetry.endpoint == "http://from-config:4318"
    assert not settings(tmp_path, toml, OTEL_SDK_DISABLED="TRUE").telemetry.enabled


@pytest.mark.parametrize(
    ("toml", "named", "detail"),
    [
        ('[telemetry]\nendpoint = "ftp://collector"\n', "[telemetry] endpoint", "http:// or https://"),
        ('[telemetry]\nendpoint = "http://user:pw@collector:4318"\n', "[telemetry] endpoint", "userinfo"),
        ('[telemetry]\nendpoint = "http://collector:4318/?k=v"\n', "[telemetry] endpoint", "query"),
        ('[telemetry]\nendpoint = "http://collector:99999"\n', "[telemetry] endpoint", "port"),
        ("[telemetry]\nendpoint = 4318\n", "[telemetry] endpoint", "string"),
        ('[telemetry]\ncontent = "yes"\n', "[telemetry] content", "boolean"),
        ('[telemetry]\nheaders = "x"\n', "[telemetry] headers", "unknown key"),
    ],
)
def test_bad_keys_are_refused_naming_the_key(tmp_path: Path, toml: str, named: str, detail: str) -> None:
    with pytest.raises(ConfigError) as info:
        settings(tmp_path, toml)
    assert named in info.value.message and detail in info.value.message


def test_a_bad_endpoint_variable_is_refused_naming_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="OTEL_EXPORTER_OTLP_ENDPOINT: must not carry userinfo"):
        settings(tmp_path, OTEL_EXPORTER_OTLP_ENDPOINT="http://u:p@collector:4318")


def test_otlp_header_values_are_known_secrets(tmp_path: Path) -> None:
    key = "collector-api-key-0123456789"
    context = build_context(settings(tmp_path, OTEL_EXPORTER_OTLP_HEADERS=f"x-api-key={key},other=ok%20value"))
    assert key not in context.redactor.redact_known(f"header was {key}")
    assert "ok value" not in context.redactor.redact_known("header was ok value")
