"""A process that runs one durable run whose tool waits for a file (started by the tests).

    python -m tests.durable._holder PLACE RUN_ID MARKER RELEASE LOG

The tool's body appends ``body`` to LOG, creates MARKER, and waits until
RELEASE exists. The process prints the run's output.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

from openprogram import Runtime, function
from openprogram.messages import ToolResultMessage
from openprogram.providers.base import ProviderRequest
from openprogram.testing import FunctionProvider, call
from tests.durable._refunds import open_store


def main(place: str, run_id: str, marker: str, release: str, log: str) -> int:
    @function(register_globally=False)
    def wait_for_release() -> str:
        """Wait until released."""
        fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.write(fd, f"body {os.getpid()}\n".encode())
        os.close(fd)
        Path(marker).touch()
        while not Path(release).exists():
            time.sleep(0.01)
        return "released"

    def model(request: ProviderRequest) -> Any:
        done = [m for m in request.messages if isinstance(m, ToolResultMessage)]
        return call("wait_for_release") if not done else f"done: {done[0].content}"

    store = open_store(place)
    try:
        runtime = Runtime(FunctionProvider(model), store=store)
        print(runtime.exec("wait", tools=[wait_for_release], run_id=run_id), flush=True)
    finally:
        store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
