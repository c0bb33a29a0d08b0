"""A counting, slowing, failing HTTP proxy in front of an S3-compatible server, run as its own process:

    python -m tests.helpers.s3_proxy --upstream http://127.0.0.1:PORT --port 0 --log requests.jsonl --delay-ms 20

Every request is forwarded as it came (signatures stay valid: the Host header is kept) and logged as one JSON line:
its method, path, query, the bytes of its Range header (or Azure's x-ms-range) and the response status. It serves in
front of the GCS and Azure emulators too (:mod:`tests.test_object_store_clouds` counts their requests); its faults
answer as S3 does. ``--delay-ms`` adds a round trip's latency to every request. Faults are set while it runs, with a
request to the proxy itself: ``POST /__proxy/faults`` and a JSON body ``{"status": 503, "count": 3, "match":
"00000000000000000000.log"}`` (the next 3 requests whose path contains ``match`` are answered 503 SlowDown without
reaching the server), or ``{"reset_after": 1000, "count": 1, "match": ".log"}`` (the response is cut after 1,000
body bytes and the connection reset). The port it listens on is printed as its first line.
"""

from __future__ import annotations

import argparse
import http.client
import json
import socket
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

_ERRORS = {403: ("AccessDenied", "Access Denied"), 404: ("NoSuchKey", "The specified key does not exist."),
           500: ("InternalError", "We encountered an internal error."),
           503: ("SlowDown", "Please reduce your request rate.")}


class Proxy(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int, upstream: str, log_path: str, delay_s: float):
        super().__init__(("127.0.0.1", port), Handler)
        parts = urlsplit(upstream)
        self.upstream = (parts.hostname, parts.port)
        self.log = open(log_path, "a", buffering=1)  # noqa: SIM115 - open for the server's lifetime
        self.delay_s = delay_s
        self.faults: list[dict] = []
        self.lock = threading.Lock()

    def handle_error(self, request, client_address) -> None:
        """A client that hangs up mid-response (a cancelled read) is its business, not a traceback on stderr."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)

    def take_fault(self, path: str) -> dict | None:
        with self.lock:
            for fault in self.faults:
                if fault.get("count", 1) > 0 and fault.get("match", "") in path:
                    fault["count"] = fault.get("count", 1) - 1
                    return fault
        return None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Proxy

    def setup(self) -> None:
        super().setup()
        # headers and body go out as two writes: without this, Nagle's algorithm holds the second until the
        # client's delayed ACK, 40 ms a request
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - BaseHTTPRequestHandler's signature
        pass

    def _body(self) -> bytes:
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def _handle(self) -> None:
        body = self._body()
        if self.path.startswith("/__proxy/faults"):
            with self.server.lock:
                self.server.faults = [json.loads(body)] if body else []
            self._reply(200, b"ok")
            return
        if self.server.delay_s:
            time.sleep(self.server.delay_s)
        fault = self.server.take_fault(self.path.partition("?")[0])
        if fault and "status" in fault:
            self._fail(fault["status"])
        else:
            self._forward(body, fault)

    do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = _handle

    def _log(self, status: int) -> None:
        """One line for this request, written before the client has any byte of the response: a test that reads
        the log once its reads are done finds every one of them (written after, the last could still be missing)."""
        path, _, query = self.path.partition("?")
        rng = self.headers.get("Range") or self.headers.get("x-ms-range")  # Azure's SDK sends its own header
        self.server.log.write(json.dumps({"method": self.command, "path": path, "query": query, "range": rng,
                                          "status": status}) + "\n")

    def _fail(self, status: int) -> None:
        code, message = _ERRORS.get(status, ("Error", "error"))
        body = (f'<?xml version="1.0" encoding="UTF-8"?><Error><Code>{code}</Code><Message>{message}</Message>'
                f"</Error>").encode()
        self._log(status)
        self._reply(status, body if self.command != "HEAD" else b"", "application/xml")

    def _reply(self, status: int, body: bytes, content_type: str = "text/plain") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _forward(self, body: bytes, fault: dict | None) -> None:
        conn = http.client.HTTPConnection(*self.server.upstream, timeout=60)
        headers = {k: v for k, v in self.headers.items() if k.lower() != "connection"}
        conn.request(self.command, self.path, body=body or None, headers=headers)
        resp = conn.getresponse()
        data = resp.read()
        conn.close()
        cut = (self.command != "HEAD" and fault is not None and "reset_after" in fault
               and len(data) > fault["reset_after"])
        self._log(-1 if cut else resp.status)
        self.send_response(resp.status)
        for k, v in resp.getheaders():
            if k.lower() not in ("connection", "transfer-encoding", "content-length", "date", "server"):
                self.send_header(k, v)
        # a HEAD's length is the object's, as the server said; its body is empty
        self.send_header("Content-Length", resp.getheader("Content-Length", "0") if self.command == "HEAD"
                         else str(len(data)))
        self.end_headers()
        if self.command == "HEAD":
            return
        if cut:
            self.wfile.write(data[:fault["reset_after"]])
            self.wfile.flush()
            # an abortive close: the client sees a connection reset mid-body
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.close_connection = True
            return
        self.wfile.write(data)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--upstream", required=True)
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--log", required=True)
    p.add_argument("--delay-ms", type=float, default=0.0)
    a = p.parse_args()
    server = Proxy(a.port, a.upstream, a.log, a.delay_ms / 1000)
    print(server.server_address[1], flush=True)
    sys.stdout.close()
    server.serve_forever()


if __name__ == "__main__":
    main()
