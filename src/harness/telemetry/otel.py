"""The OpenTelemetry SDK side of telemetry: providers, OTLP/HTTP exporters, and the recorder that turns each call
into a span and a duration measurement. Imported only when an endpoint is configured (harness.telemetry).

Nothing here can stall or fail a call: spans wait in a bounded queue and metrics in memory, both exported by the
SDK's background threads; export problems are logged once; shutdown waits a bounded time.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from opentelemetry.context import Context
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from harness import __version__
from harness.errors import LedgerUnavailable
from harness.telemetry.attributes import common_attributes, span_attributes, span_name, tool_name
from harness.telemetry.settings import TelemetrySettings

log = logging.getLogger("harness.telemetry")

SERVICE_NAME = "triage-harness"
DURATION_METRIC = "mcp.server.operation.duration"
# The bucket boundaries the MCP semantic conventions advise for operation durations, in seconds.
DURATION_BUCKETS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
QUEUE_MAX = 2048
BATCH_MAX = 512
EXPORT_TIMEOUT_S = 5.0
# How long the end of a process (a CLI call's exit, a server's stop) waits for the last export.
FLUSH_TIMEOUT_S = 2.0

_PROPAGATOR = TraceContextTextMapPropagator()


class _FirstProblem(logging.Handler):
    """Takes the OpenTelemetry SDK's own log records: the first warning or error is logged through the harness log
    (redacted like every line), the rest are dropped, so an unreachable collector cannot flood the log."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self._lock_once = threading.Lock()
        self._told = False

    def tell(self, message: str) -> None:
        with self._lock_once:
            if self._told:
                return
            self._told = True
        log.warning("telemetry: %s (export problems are logged once; calls are not affected)", message)

    def emit(self, record: logging.LogRecord) -> None:
        self.tell(record.getMessage())


def _problem_handler() -> _FirstProblem:
    sdk_log = logging.getLogger("opentelemetry")
    for handler in sdk_log.handlers:
        if isinstance(handler, _FirstProblem):
            return handler
    handler = _FirstProblem()
    sdk_log.addHandler(handler)
    sdk_log.propagate = False
    return handler


class Telemetry:
    """One process's tracer and meter over OTLP/HTTP (protobuf). The providers are this object's own, not the
    global ones, so nothing else in the process (the MCP SDK's own instrumentation) exports through them."""

    def __init__(self, settings: TelemetrySettings) -> None:
        self.content = settings.content
        self._problems = _problem_handler()
        resource = Resource.create({"service.name": SERVICE_NAME, "service.version": __version__})
        self._spans = BatchSpanProcessor(
            OTLPSpanExporter(endpoint=settings.traces_url, timeout=EXPORT_TIMEOUT_S),
            max_queue_size=QUEUE_MAX,
            max_export_batch_size=BATCH_MAX,
        )
        self._tracer_provider = TracerProvider(resource=resource, shutdown_on_exit=False)
        self._tracer_provider.add_span_processor(self._spans)
        reader = PeriodicExportingMetricReader(
            OTLPMetricExporter(endpoint=settings.metrics_url, timeout=EXPORT_TIMEOUT_S)
        )
        self._meter_provider = MeterProvider(resource=resource, metric_readers=[reader], shutdown_on_exit=False)
        self._tracer = self._tracer_provider.get_tracer("harness", __version__)
        self._duration = self._meter_provider.get_meter("harness", __version__).create_histogram(
            DURATION_METRIC,
            unit="s",
            description="Duration of a tool call as observed by the harness, from its arrival to its result",
            explicit_bucket_boundaries_advisory=list(DURATION_BUCKETS),
        )

    def export(self, record: Any, error_code: str, start: Any, end: Any) -> None:
        """The span and the duration measurement of one finished call; never raises."""
        try:
            duration_ns = max(0, time.perf_counter_ns() - record.started_ns)
            ended = time.time_ns()
            call = record.call
            tool = tool_name(record)
            span = self._tracer.start_span(
                span_name(tool),
                context=_parent(call),
                kind=SpanKind.SERVER,
                attributes=span_attributes(call, tool, error_code, start, end, content=self.content),
                start_time=ended - duration_ns,
            )
            if error_code:
                # The code only: an error message can echo the caller's arguments.
                span.set_status(Status(StatusCode.ERROR, error_code))
            span.end(end_time=ended)
            self._duration.record(duration_ns / 1e9, common_attributes(call, tool, error_code))
        except Exception as exc:  # noqa: BLE001 - telemetry never fails a call
            self._problems.tell(f"a span could not be recorded: {type(exc).__name__}")

    def shutdown(self, timeout_s: float = FLUSH_TIMEOUT_S) -> None:
        """Export what is queued and stop, waiting at most `timeout_s`; an export still running then is abandoned
        (its threads are daemons)."""
        millis = int(timeout_s * 1000)
        threads = [
            threading.Thread(target=self._spans.shutdown, name="harness-telemetry-spans", daemon=True),
            threading.Thread(
                target=lambda: self._meter_provider.shutdown(timeout_millis=millis),
                name="harness-telemetry-metrics",
                daemon=True,
            ),
        ]
        deadline = time.monotonic() + timeout_s
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))


def _parent(call: Any) -> Context | None:
    """The caller's W3C trace context (traceparent, tracestate from params._meta), or None for a new trace."""
    if not call.trace_parent:
        return None
    carrier = {"traceparent": call.trace_parent}
    if call.trace_state:
        carrier["tracestate"] = call.trace_state
    return _PROPAGATOR.extract(carrier)


class TracingRecorder:
    """A Recorder around the ledger's: every call it sees (run, refused, or refused for an unavailable ledger)
    becomes one span carrying the rows the ledger wrote for it."""

    def __init__(self, inner: Any, telemetry: Telemetry) -> None:
        self._inner = inner
        self._telemetry = telemetry
        self._lock = threading.Lock()
        # Start rows of calls in flight, by the identity of their CallRecord (alive until finish).
        self._starts: dict[int, Any] = {}

    def begin(self, record: Any) -> Any:
        try:
            start = self._inner.begin(record)
        except LedgerUnavailable as exc:
            self._telemetry.export(record, exc.code, None, None)
            raise
        with self._lock:
            self._starts[id(record)] = start
        return start

    def finish(self, record: Any, outcome: Any, duration_ms: int, exit_code: int | None) -> Any:
        end = self._inner.finish(record, outcome, duration_ms, exit_code)
        with self._lock:
            start = self._starts.pop(id(record), None)
        self._telemetry.export(record, outcome.error_code, start, end)
        return end

    def refuse(self, record: Any, outcome: Any, exit_code: int | None) -> Any:
        rows = tuple(self._inner.refuse(record, outcome, exit_code) or ())
        start, end = rows if len(rows) == 2 else (None, None)
        self._telemetry.export(record, outcome.error_code, start, end)
        return rows

    def close(self) -> None:
        closer = getattr(self._inner, "close", None)
        if callable(closer):
            closer()

