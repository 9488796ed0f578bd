"""A loopback OTLP/HTTP receiver for the telemetry tests: POST /v1/traces and /v1/metrics, decoded with the
official OpenTelemetry protobuf definitions (opentelemetry-proto)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

PROTOBUF = "application/x-protobuf"


@dataclass(frozen=True)
class Span:
    name: str
    kind: int
    trace_id: str
    span_id: str
    parent_span_id: str
    trace_state: str
    status_code: int
    status_message: str
    attributes: dict[str, Any]
    resource: dict[str, Any]


@dataclass(frozen=True)
class Point:
    metric: str
    unit: str
    count: int
    total: float
    attributes: dict[str, Any]


def _value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in value.array_value.values]
    return getattr(value, kind) if kind else None


def _attributes(pairs: Any) -> dict[str, Any]:
    return {pair.key: _value(pair.value) for pair in pairs}


@dataclass
class Receiver:
    """What the receiver got: every raw body (for byte-level checks) and the decoded spans and histogram points."""

    url: str = ""
    status: int = 200
    bodies: list[tuple[str, str, bytes]] = field(default_factory=list)
    spans: list[Span] = field(default_factory=list)
    points: list[Point] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def take(self, path: str, content_type: str, body: bytes) -> None:
        with self.lock:
            self.bodies.append((path, content_type, body))
            if self.status != 200:
                return
            if path == "/v1/traces":
                request = ExportTraceServiceRequest.FromString(body)
                for resource_spans in request.resource_spans:
                    resource = _attributes(resource_spans.resource.attributes)
                    for scope_spans in resource_spans.scope_spans:
                        for span in scope_spans.spans:
                            self.spans.append(Span(
                                name=span.name,
                                kind=span.kind,
                                trace_id=span.trace_id.hex(),
                                span_id=span.span_id.hex(),
                                parent_span_id=span.parent_span_id.hex(),
                                trace_state=span.trace_state,
                                status_code=span.status.code,
                                status_message=span.status.message,
                                attributes=_attributes(span.attributes),
                                resource=resource,
                            ))
            elif path == "/v1/metrics":
                request = ExportMetricsServiceRequest.FromString(body)
                for resource_metrics in request.resource_metrics:
                    for scope_metrics in resource_metrics.scope_metrics:
                        for metric in scope_metrics.metrics:
                            if metric.WhichOneof("data") != "histogram":
                                continue
                            for point in metric.histogram.data_points:
                                self.points.append(Point(
                                    metric=metric.name,
                                    unit=metric.unit,
                                    count=point.count,
                                    total=point.sum,
                                    attributes=_attributes(point.attributes),
                                ))

    def raw(self) -> bytes:
        with self.lock:
            return b"".join(body for _, _, body in self.bodies)

    def wait_for(self, check: Callable[[Receiver], bool], timeout: float = 30.0) -> None:
        """Block until `check` holds (exports run on the sender's background threads)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if check(self):
                    return
            time.sleep(0.05)
        raise AssertionError(f"the receiver did not get what was expected; spans: {[s.name for s in self.spans]}")

    def spans_named(self, name: str) -> list[Span]:
        return [s for s in self.spans if s.name == name]


@contextmanager
def otlp_receiver(status: int = 200) -> Iterator[Receiver]:
    """Serve OTLP/HTTP on 127.0.0.1 (a free port) for the duration of the block; `status` other than 200 makes it
    refuse every export (bodies are still kept)."""
    received = Receiver(status=status)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the http.server hook name
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            received.take(self.path, self.headers.get("content-type", ""), body)
            if received.status != 200:
                self.send_response(received.status)
                self.send_header("content-length", "0")
                self.end_headers()
                return
            answer = ExportTraceServiceResponse() if self.path == "/v1/traces" else ExportMetricsServiceResponse()
            payload = answer.SerializeToString()
            self.send_response(200)
            self.send_header("content-type", PROTOBUF)
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the http.server signature
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    received.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield received
    finally:
        server.shutdown()
        server.server_close()
