"""The `[telemetry]` settings: where spans and metrics go and whether call content goes with them (pure)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.text.canonjson import json_type
from harness.validation import configured_url

ENDPOINT_ENV = "OTEL_EXPORTER_OTLP_ENDPOINT"
DISABLED_ENV = "OTEL_SDK_DISABLED"


def check_endpoint(value: Any) -> str:
    """An OTLP/HTTP base URL: http or https, a host, no userinfo, query or fragment; empty means off.

    Credentials for a collector go in OTEL_EXPORTER_OTLP_HEADERS, never in the URL, which is logged.
    """
    if not isinstance(value, str):
        raise ValueError(f"expected a string, got {json_type(value)}")
    url = value.strip()
    if not url:
        return ""
    configured_url(url, schemes=("http", "https"),
                   userinfo_hint=" (put collector credentials in OTEL_EXPORTER_OTLP_HEADERS)")
    return url.rstrip("/")


@dataclass(frozen=True)
class TelemetrySettings:
    """`endpoint` is the OTLP/HTTP base URL (the signal paths /v1/traces and /v1/metrics are appended); empty is
    off. `content` exports the ledger's redacted arguments and result preview with each span."""

    endpoint: str = ""
    content: bool = False

    @property
    def enabled(self) -> bool:
        return bool(self.endpoint)

    @property
    def traces_url(self) -> str:
        return f"{self.endpoint}/v1/traces"

    @property
    def metrics_url(self) -> str:
        return f"{self.endpoint}/v1/metrics"


def resolve(table: dict[str, Any], environ: dict[str, str] | Any) -> TelemetrySettings:
    """The effective settings: OTEL_EXPORTER_OTLP_ENDPOINT wins over `[telemetry] endpoint`, and
    OTEL_SDK_DISABLED=true turns both off. Raises ValueError naming the variable when it is invalid."""
    if environ.get(DISABLED_ENV, "").strip().lower() == "true":
        return TelemetrySettings(endpoint="", content=table["content"])
    given = environ.get(ENDPOINT_ENV, "")
    if given.strip():
        try:
            endpoint = check_endpoint(given)
        except ValueError as exc:
            raise ValueError(f"{ENDPOINT_ENV}: {exc}") from None
    else:
        endpoint = table["endpoint"]
    return TelemetrySettings(endpoint=endpoint, content=table["content"])


HEADERS_ENVS = ("OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_METRICS_HEADERS")


def header_values(environ: dict[str, str] | Any) -> list[str]:
    """The values of the OTLP header variables (`k=v,k2=v2`, values percent-encoded): a collector's API key travels
    there, so each is a secret the redactor must know (the variable names do not look secret)."""
    from urllib.parse import unquote

    values: list[str] = []
    for name in HEADERS_ENVS:
        for pair in environ.get(name, "").split(","):
            _, sep, value = pair.partition("=")
            if sep and value.strip():
                values.append(unquote(value.strip()))
    return values
