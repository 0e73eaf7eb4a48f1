"""A fake web API on 127.0.0.1: real sockets, so real timeouts, but nothing leaves the machine.

    class Handler(QuietHandler):
        def do_GET(self) -> None:
            self.send(200, {"content-type": "application/json"}, b"{}")

    with serve_local(Handler) as base_url:  # e.g. http://127.0.0.1:4242
        ...
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class QuietHandler(BaseHTTPRequestHandler):
    """A request handler that logs nothing and answers with :meth:`send`."""

    def send(self, status: int, headers: Mapping[str, str], body: bytes) -> None:
        """Send the status, the headers and a content-length, then the body; a client that gave up
        (its timeout) is not an error."""
        try:
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextlib.contextmanager
def serve_local(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """Serve ``handler`` on 127.0.0.1 (a free port) from a thread; yields the base URL, stops on leaving."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
