"""Worker processes for the scale-out tests: ``openprogram worker`` on the test program."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

from ._program import LOG_VAR

ROOT = Path(__file__).resolve().parent.parent.parent

WAIT_S = 120.0
"""Upper bound on waits for another process (generous: the machine may be busy)."""


class Workers:
    """Worker processes on one store, each logging the program's steps to ``log``."""

    def __init__(self, url: str, log: Path) -> None:
        self.url = url
        self.log = log
        self.started: list[subprocess.Popen[str]] = []

    def start(self, executor_id: str, *, concurrency: int = 4) -> subprocess.Popen[str]:
        """A worker, once it takes runs."""
        argv = [sys.executable, "-m", "openprogram", "worker", "--store", self.url]
        argv += ["--module", "tests.scaleout._program"]
        argv += ["--runtime", "tests.scaleout._program:runtime"]
        argv += ["--executor-id", executor_id, "--concurrency", str(concurrency)]
        env = {**os.environ, "PYTHONPATH": str(ROOT), LOG_VAR: str(self.log)}
        # stderr goes to a file: a worker logging more than a pipe holds would block.
        errors = self.log.with_name(f"{self.log.name}.{executor_id}.stderr")
        with errors.open("w") as err:
            worker = subprocess.Popen(
                argv, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=err, text=True
            )
        self.started.append(worker)
        assert worker.stdout is not None
        line = worker.stdout.readline()
        assert line.startswith(f"worker {executor_id} takes runs"), errors.read_text()[-3000:]
        return worker

    def stop(self, worker: subprocess.Popen[str], signum: int = signal.SIGTERM) -> None:
        """Stop a worker (SIGTERM: it stops; SIGKILL: it dies) and wait for it."""
        worker.send_signal(signum)
        worker.communicate(timeout=WAIT_S)

    def close(self) -> None:
        for worker in self.started:
            if worker.poll() is None:
                self.stop(worker)

    def lines(self) -> list[tuple[int, str, str]]:
        """(pid, what, key) of every logged step, in order."""
        if not self.log.exists():
            return []
        out = []
        for line in self.log.read_text().splitlines():
            pid, what, key = line.split("\t")
            out.append((int(pid), what, key))
        return out

    def counts(self, what: str) -> Counter[str]:
        """How often each key of ``what`` ran."""
        return Counter(key for _, w, key in self.lines() if w == what)
