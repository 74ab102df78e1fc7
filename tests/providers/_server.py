"""A scripted HTTP server on 127.0.0.1 that speaks whatever wire format a test scripts.

Each request pops the next scripted ``Reply`` (or calls a function of the
request). Streaming replies go out with chunked transfer encoding, one flushed
chunk per scripted piece, so a test decides where fragments split; ``cut``
drops the connection before the terminating chunk, ``delay_s`` holds the
status line back (interrupted when the server closes).
"""

from __future__ import annotations

import itertools
import json
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit


@dataclass
class Reply:
    """One scripted HTTP response."""

    status: int = 200
    body: bytes | str | Mapping[str, Any] | None = None
    chunks: Sequence[bytes | str] | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    content_type: str | None = None
    delay_s: float = 0.0
    chunk_delay_s: float = 0.0
    cut: bool = False


@dataclass
class Seen:
    """One request the server received."""

    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body)


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client closing its pooled connection, or an idle one timing out, is routine.
        exc = sys.exc_info()[1]
        if not isinstance(exc, ConnectionError | TimeoutError):
            super().handle_error(request, client_address)


def _bytes(piece: bytes | str) -> bytes:
    return piece.encode() if isinstance(piece, str) else piece


class WireServer:
    """The server; use as a context manager or call ``close()``."""

    def __init__(self) -> None:
        self.requests: list[Seen] = []
        self._replies: deque[Reply | Callable[[Seen], Reply]] = deque()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # small chunked writes must not wait for delayed ACKs
            timeout = 5  # an idle keep-alive connection never pins a handler thread for long

            def do_POST(self) -> None:
                server._handle(self)

            def do_GET(self) -> None:
                server._handle(self)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._httpd = _QuietServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def push(self, *replies: Reply | Callable[[Seen], Reply]) -> WireServer:
        """Script the next replies, in order."""
        with self._lock:
            self._replies.extend(replies)
        return self

    @property
    def pending(self) -> int:
        """Scripted replies not used yet."""
        return len(self._replies)

    def close(self) -> None:
        self._stop.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> WireServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- request handling ----------------------------------------------------------------

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        length = int(h.headers.get("content-length") or 0)
        body = h.rfile.read(length) if length else b""
        parts = urlsplit(h.path)
        seen = Seen(
            h.command, parts.path, parts.query, {k.lower(): v for k, v in h.headers.items()}, body
        )
        with self._lock:
            self.requests.append(seen)
            script = self._replies.popleft() if self._replies else None
        reply = script(seen) if callable(script) else script
        if reply is None:
            reply = Reply(500, {"error": {"message": "test server: no scripted reply left"}})
        try:
            self._send(h, reply)
        except (BrokenPipeError, ConnectionResetError):
            h.close_connection = True  # the client gave up (deadline tests): nothing to do

    def _send(self, h: BaseHTTPRequestHandler, reply: Reply) -> None:
        if reply.delay_s and self._stop.wait(reply.delay_s):
            h.close_connection = True
            return
        h.send_response(reply.status)
        for name, value in reply.headers.items():
            h.send_header(name, value)
        if reply.chunks is not None:
            h.send_header("content-type", reply.content_type or "text/event-stream")
            h.send_header("transfer-encoding", "chunked")
            h.end_headers()
            self._send_chunks(h, reply)
            return
        payload = reply.body
        if isinstance(payload, Mapping):
            payload = json.dumps(payload)
        data = _bytes(payload or b"")
        h.send_header("content-type", reply.content_type or "application/json")
        h.send_header("content-length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)
        h.wfile.flush()

    def _send_chunks(self, h: BaseHTTPRequestHandler, reply: Reply) -> None:
        for piece in reply.chunks or ():
            data = _bytes(piece)
            if not data:
                continue
            h.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            h.wfile.flush()
            if reply.chunk_delay_s and self._stop.wait(reply.chunk_delay_s):
                h.close_connection = True
                return
        if reply.cut:
            h.close_connection = True  # no terminating chunk: the client sees a broken body
            return
        h.wfile.write(b"0\r\n\r\n")
        h.wfile.flush()


# -- wire helpers ------------------------------------------------------------------------


def sse(*events: Mapping[str, Any] | str | tuple[str, Mapping[str, Any] | str]) -> bytes:
    """An SSE body: a dict is a ``data:`` JSON event, a ``(name, data)`` pair a named event."""
    out = []
    for ev in events:
        name, data = ev if isinstance(ev, tuple) else (None, ev)
        text = data if isinstance(data, str) else json.dumps(data)
        head = f"event: {name}\n" if name else ""
        out.append(f"{head}data: {text}\n\n")
    return "".join(out).encode()


def split_at(data: bytes, *offsets: int) -> list[bytes]:
    """Cut ``data`` at the given byte offsets."""
    cuts = [0, *sorted(o for o in offsets if 0 < o < len(data)), len(data)]
    return [data[a:b] for a, b in itertools.pairwise(cuts) if b > a]


def every(data: bytes, size: int) -> list[bytes]:
    """Cut ``data`` into pieces of ``size`` bytes."""
    return [data[i : i + size] for i in range(0, len(data), size)]


def awkward(data: bytes, needles: Iterable[bytes]) -> list[bytes]:
    """Cut ``data`` in the middle of each occurrence of each needle (e.g. inside ``\\r\\n``)."""
    offsets = []
    for needle in needles:
        start = data.find(needle)
        while start != -1:
            offsets.append(start + max(1, len(needle) // 2))
            start = data.find(needle, start + 1)
    return split_at(data, *offsets)


def openai_ok() -> Reply:
    """An OpenAI chat stream answering ``"ok"``: the reply most wire tests need."""
    return Reply(
        chunks=[
            sse(
                {"choices": [{"index": 0, "delta": {"content": "ok"}}]},
                {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
                "[DONE]",
            )
        ]
    )
