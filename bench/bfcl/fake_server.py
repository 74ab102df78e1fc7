"""A scripted OpenAI-compatible Chat Completions server on 127.0.0.1, to test the harness.

The script maps the text of a request's last user message to the reply:
``{"calls": [[name, {args}], ...]}`` (tool calls), ``{"text": "..."}`` or
``{"status": 500, "error": "..."}``; unknown questions get a plain text
reply. Streaming (SSE, as ``LocalProvider`` asks) and non-streaming
requests are both answered. Every request body is kept in ``requests``.

Run alone: ``python bench/bfcl/fake_server.py script.json`` prints its base URL.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["FakeServer", "serve"]


class FakeServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, script: Mapping[str, Mapping[str, Any]]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.script = dict(script)
        self.requests: list[dict[str, Any]] = []

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def reply_for(self, body: Mapping[str, Any]) -> Mapping[str, Any]:
        users = [m for m in body.get("messages", []) if m.get("role") == "user"]
        last = users[-1].get("content", "") if users else ""
        text = last if isinstance(last, str) else json.dumps(last)
        return self.script.get(text, {"text": "I cannot help with that."})


def _tool_calls(reply: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "id": f"call_{i}",
            "type": "function",
            "index": i,
            "function": {"name": name, "arguments": json.dumps(args)},
        }
        for i, (name, args) in enumerate(reply.get("calls", []))
    ]


class _Handler(BaseHTTPRequestHandler):
    server: FakeServer

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: tests read results, not access logs

    def do_GET(self) -> None:
        self._send_json(200, {"status": "ok"})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        self.server.requests.append(body)
        reply = self.server.reply_for(body)
        if "status" in reply:
            error = {"code": reply["status"], "message": reply.get("error", "scripted failure")}
            self._send_json(int(reply["status"]), {"error": error})
            return
        calls = _tool_calls(reply)
        message: dict[str, Any] = {"role": "assistant", "content": reply.get("text") or None}
        if calls:
            message["tool_calls"] = calls
        finish = "tool_calls" if calls else "stop"
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        if body.get("stream"):
            self._send_stream(message, finish, usage)
        else:
            choice = {"index": 0, "message": message, "finish_reason": finish}
            self._send_json(
                200,
                {
                    "id": "fake",
                    "object": "chat.completion",
                    "model": "fake",
                    "choices": [choice],
                    "usage": usage,
                },
            )

    def _send_json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _send_stream(self, message: dict[str, Any], finish: str, usage: Any) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        delta = {"role": "assistant", **{k: v for k, v in message.items() if k != "role"}}
        chunks = [
            {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
            {"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
            {"choices": [], "usage": usage},
        ]
        for chunk in chunks:
            event = {"id": "fake", "object": "chat.completion.chunk", "model": "fake", **chunk}
            self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


@contextmanager
def serve(script: Mapping[str, Mapping[str, Any]]) -> Iterator[FakeServer]:
    """Run a ``FakeServer`` in a thread for the duration of the block."""
    server = FakeServer(script)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as f, serve(json.load(f)) as fake:
        print(fake.base_url, flush=True)
        threading.Event().wait()
