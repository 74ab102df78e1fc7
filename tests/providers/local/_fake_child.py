"""A stand-in for the llama.cpp child: same handshake, a tiny HTTP server, no model.

Run by ``Supervisor`` in place of the real child code. ``FAKE_CHILD_MODE``
picks a behaviour: ``ok`` serves ``/health``; ``crash`` writes to stderr and
exits 3; ``silent`` never announces itself. ``/health`` answers 503 while the
file named by ``FAKE_CHILD_SICK`` holds this process's pid. ``/v1/models``
names the model alias it was given, as llama.cpp's server does.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

CODE = f"import runpy; runpy.run_path({str(Path(__file__))!r}, run_name='__main__')"
"""Python source for ``python -c`` that runs this file, whatever ``sys.path`` holds."""


class _Health(BaseHTTPRequestHandler):
    alias = ""

    def do_GET(self) -> None:
        if self.path == "/v1/models":
            body = json.dumps({"object": "list", "data": [{"id": self.alias}]}).encode()
            self.send_response(200)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        sick_file = os.environ.get("FAKE_CHILD_SICK")
        sick = (
            bool(sick_file)
            and Path(str(sick_file)).exists()
            and (Path(str(sick_file)).read_text().strip() == str(os.getpid()))
        )
        self.send_response(503 if sick else 200)
        self.send_header("content-length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, format: str, *args: object) -> None:
        pass


def main() -> None:
    config = json.loads(sys.argv[1])
    assert {"model", "template", "threads", "context_tokens", "alias"} <= set(config)
    _Health.alias = config["alias"]
    mode = os.environ.get("FAKE_CHILD_MODE", "ok")
    if mode == "crash":
        sys.stderr.write("boom: the fake model failed to load\n")
        sys.stderr.flush()
        sys.exit(3)
    if mode == "silent":
        sys.stdin.read()
        return
    server = HTTPServer(("127.0.0.1", 0), _Health)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"OPENPROGRAM-LOCAL-READY http://127.0.0.1:{server.server_address[1]}", flush=True)
    sys.stdin.read()
    os._exit(0)


if __name__ == "__main__":
    main()
