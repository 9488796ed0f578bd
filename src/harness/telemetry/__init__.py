"""OpenTelemetry export of every call (README "Tracing"). Only `settings` and `attributes` may be imported while
telemetry is off; `otel` loads the OpenTelemetry SDK and is imported only when an endpoint is configured."""
