"""An OTLP/HTTP protobuf receiver for the tests, decoding with the official definitions
(PyPI `opentelemetry-proto`, pinned in mcp-servers/requirements.txt).

    otlp_receiver.py --port PORT --out FILE [--delay-ms N] [--refuse]

Serves POST /v1/traces, /v1/logs and /v1/metrics on 127.0.0.1:PORT. Each request is decoded as
the collector's Export*ServiceRequest and appended to FILE as one JSON line per item:

    {"signal": "logs", "body": "...", "attributes": {...}, "trace_id": "...", "span_id": "...",
     "service": "toolgate", "headers": {...}}
    {"signal": "traces", "name": "...", "kind": N, "attributes": {...}, "trace_id": "...", ...}
    {"signal": "metrics", "name": "...", "points": N}

then answered 200 with an empty Export*ServiceResponse (an acknowledgement), after --delay-ms.
A line is written and flushed before the answer, so what the file holds was acknowledged or was
in flight. With --refuse every request is answered 503 and nothing is recorded. Stopping the
process is how a test takes the collector away. Prints "listening" once it accepts requests.
"""

import argparse
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

LOCK = threading.Lock()


def value(any_value):
    kind = any_value.WhichOneof("value")
    if kind is None:
        return None
    if kind in ("array_value", "kvlist_value", "bytes_value"):
        return str(getattr(any_value, kind))
    return getattr(any_value, kind)


def attributes(kvs):
    return {kv.key: value(kv.value) for kv in kvs}


def service(resource):
    return attributes(resource.attributes).get("service.name")


def logs(body, headers):
    request = logs_service_pb2.ExportLogsServiceRequest()
    request.ParseFromString(body)
    for resource_logs in request.resource_logs:
        for scope_logs in resource_logs.scope_logs:
            for record in scope_logs.log_records:
                yield {
                    "signal": "logs",
                    "service": service(resource_logs.resource),
                    "scope": scope_logs.scope.name,
                    "event_name": record.event_name,
                    "severity": record.severity_number,
                    "time_unix_nano": record.time_unix_nano,
                    "body": value(record.body),
                    "attributes": attributes(record.attributes),
                    "trace_id": record.trace_id.hex(),
                    "span_id": record.span_id.hex(),
                    "headers": headers,
                }


def traces(body, headers):
    request = trace_service_pb2.ExportTraceServiceRequest()
    request.ParseFromString(body)
    for resource_spans in request.resource_spans:
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                yield {
                    "signal": "traces",
                    "service": service(resource_spans.resource),
                    "name": span.name,
                    "kind": span.kind,
                    "status": span.status.code,
                    "start": span.start_time_unix_nano,
                    "end": span.end_time_unix_nano,
                    "attributes": attributes(span.attributes),
                    "trace_id": span.trace_id.hex(),
                    "span_id": span.span_id.hex(),
                    "headers": headers,
                }


def metrics(body, headers):
    request = metrics_service_pb2.ExportMetricsServiceRequest()
    request.ParseFromString(body)
    for resource_metrics in request.resource_metrics:
        for scope_metrics in resource_metrics.scope_metrics:
            for metric in scope_metrics.metrics:
                data = metric.WhichOneof("data")
                yield {
                    "signal": "metrics",
                    "service": service(resource_metrics.resource),
                    "name": metric.name,
                    "kind": data,
                    "points": len(getattr(metric, data).data_points) if data else 0,
                    "headers": headers,
                }


ROUTES = {
    "/v1/logs": (logs, logs_service_pb2.ExportLogsServiceResponse),
    "/v1/traces": (traces, trace_service_pb2.ExportTraceServiceResponse),
    "/v1/metrics": (metrics, metrics_service_pb2.ExportMetricsServiceResponse),
}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--delay-ms", type=int, default=0)
    parser.add_argument("--refuse", action="store_true")
    args = parser.parse_args()
    out = open(args.out, "a", encoding="utf-8")

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            route = ROUTES.get(self.path)
            if route is None:
                return self.answer(404, b"")
            if args.refuse:
                return self.answer(503, b"")
            if self.headers.get("Content-Type") != "application/x-protobuf":
                return self.answer(415, b"")
            decode, response = route
            headers = {
                k.lower(): v for k, v in self.headers.items()
                if k.lower() not in ("content-length", "host", "accept", "accept-encoding")
            }
            items = list(decode(body, headers))
            with LOCK:
                for item in items:
                    out.write(json.dumps(item) + "\n")
                out.flush()
            time.sleep(args.delay_ms / 1000)
            self.answer(200, response().SerializeToString())

        def answer(self, status, body):
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                # The sender is gone before its answer (a test kills it mid-batch): what it
                # sent is recorded, as a collector would have received it.
                pass

        def log_message(self, *_):
            pass

    ThreadingHTTPServer.allow_reuse_address = True
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    print("listening", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    sys.exit(0)


if __name__ == "__main__":
    main()
