"""Bounded reads: figures for docs/reliability.md (memory for huge error bodies, SSE time).

Run alone: ``python bench/reliability/bounded.py [--runs N]``. To measure another
checkout (e.g. the code before a change), put it first on ``PYTHONPATH``.

- ``error body``: a loopback server (its own process, so its memory does not
  count) answers 500 with a 100 MB body; a fresh client process makes one call
  (``max_retries=0``) and reports how much its peak RSS grew.
- ``sse line``: the SSE decoder fed one 16 MB ``data:`` line in 64 KiB chunks.
- ``event cap``: a streamed reply whose single event grows past the cap without
  a line end, over loopback: time until the typed ``LLMError``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MB = 1_000_000
_CHUNK = 64 * 1024


def _serve(mode: str) -> None:
    """The loopback server (run in its own process): prints its port, serves until killed."""
    piece = b"x" * _CHUNK

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            try:
                if mode == "error":
                    self._send(500, "text/plain", 100 * MB)
                else:
                    self._send(200, "text/event-stream", 40 * MB, prefix=b"data: ")
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client stopped reading: what a bounded reader does

        def _send(self, status: int, kind: str, size: int, prefix: bytes = b"") -> None:
            self.send_response(status)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(size + len(prefix)))
            self.end_headers()
            self.wfile.write(prefix)
            for _ in range(size // _CHUNK):
                self.wfile.write(piece)
            self.wfile.write(piece[: size % _CHUNK])

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


def _client(port: int, mode: str) -> None:
    """One call against the server (run in a fresh process); prints a JSON line of figures."""
    from openprogram import LLMError
    from openprogram.providers import OpenAIProvider

    provider = OpenAIProvider(
        base_url=f"http://127.0.0.1:{port}/v1", api_key="k", model="m", max_retries=0
    )
    from openprogram import Runtime

    rt = Runtime(provider)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    try:
        rt.exec("hi", tools=[], timeout_s=120)
        outcome = "answered"
    except (LLMError, TimeoutError) as exc:
        outcome = f"{type(exc).__name__}: {str(exc)[:120]}"
    seconds = time.perf_counter() - started
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024  # KiB -> MiB
    print(json.dumps({"rss_growth_mib": grown, "seconds": seconds, "outcome": outcome}))


def _over_loopback(mode: str) -> dict[str, object]:
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", mode], stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        done = subprocess.run(
            [sys.executable, __file__, "--client", str(port), mode],
            capture_output=True,
            text=True,
            check=True,
            env=os.environ,
        )
        result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
        return result
    finally:
        server.kill()
        server.wait()


def _sse_line_seconds(size: int) -> float:
    from openprogram.providers._sse import SSEDecoder

    data = b"data: " + b"a" * size + b"\n\n"
    decoder = SSEDecoder()
    started = time.perf_counter()
    events = []
    for i in range(0, len(data), _CHUNK):
        events.extend(decoder.feed(data[i : i + _CHUNK]))
    seconds = time.perf_counter() - started
    assert len(events) == 1
    assert len(events[0].data) == size
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--line-mb", type=int, default=16)
    parser.add_argument("--serve")
    parser.add_argument("--client", nargs=2)
    parser.add_argument("--only", choices=["error", "sse", "event"])
    args = parser.parse_args()
    if args.serve:
        _serve(args.serve)
        return
    if args.client:
        _client(int(args.client[0]), args.client[1])
        return
    import openprogram

    print(f"openprogram from {os.path.dirname(openprogram.__file__)}")
    if args.only in (None, "error"):
        errors = [_over_loopback("error") for _ in range(args.runs)]
        growth = [float(str(e["rss_growth_mib"])) for e in errors]
        print(
            f"100 MB error body: peak RSS growth median {statistics.median(growth):.1f} MiB "
            f"(min {min(growth):.1f}, max {max(growth):.1f}) over {args.runs} runs"
        )
        print(f"  outcome: {errors[0]['outcome']}")
    if args.only in (None, "sse"):
        lines = [_sse_line_seconds(args.line_mb * MB) for _ in range(args.runs)]
        print(
            f"{args.line_mb} MB SSE line: median {statistics.median(lines):.3f} s "
            f"(min {min(lines):.3f}, max {max(lines):.3f})"
        )
    if args.only in (None, "event"):
        caps = [_over_loopback("event") for _ in range(args.runs)]
        cap_s = statistics.median(float(str(c["seconds"])) for c in caps)
        print(f"40 MB event without a line end: ended after median {cap_s:.2f} s")
        print(f"  outcome: {caps[0]['outcome']}")


if __name__ == "__main__":
    main()
