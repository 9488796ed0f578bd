"""The `[telemetry]` settings: where spans and metrics go and whether call content goes with them (pure)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

ENDPOINT_ENV = "OTEL_EXPORTER_OTLP_ENDPOINT"
DISABLED_ENV = "OTEL_SDK_DISABLED"


def check_endpoint(value: Any) -> str:
    """An OTLP/HTTP base URL: http or https, a host, no userinfo, query or fragment; empty means off.

    Credentials for a collector go in OTEL_EXPORTER_OTLP_HEADERS, never in the URL, which is logged.
    """
    if not isinstance(value, str):
        raise ValueError("expected a string")
    url = value.strip()
    if not url:
        return ""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise ValueError(f"must be an http:// or https:// URL, got {url!r}")
    if not parts.hostname:
        raise ValueError(f"must name a host, got {url!r}")
    if parts.username is not None or parts.password is not None:
        raise ValueError("must not carry userinfo (put collector credentials in OTEL_EXPORTER_OTLP_HEADERS)")
    if parts.query or parts.fragment or url.endswith(("?", "#")):
        raise ValueError("must not carry a query or fragment")
    try:
        parts.port  # noqa: B018 - raises ValueError on an invalid port
    except ValueError as exc:
        raise ValueError(f"has an invalid port: {exc}") from None
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
