"""Start and supervise an embedded llama.cpp server (xllamacpp) in a child process.

A ``Supervisor`` owns at most one server of one model, started on first use:
the child (``_child``) loads the model, binds a free port on 127.0.0.1 and
prints its URL; the parent then polls ``GET /health`` until it answers 200.
A child keeps the model's memory and any native crash out of the user's
process, and can be stopped for real.

Lifetime: the child blocks reading its stdin, so it exits when the parent
closes the pipe (``stop()``, which each supervisor registers with ``atexit``
at its first start, so every server stops at exit) or dies in any way, even
``SIGKILL``. ``ensure()`` restarts a child that has exited;
``ensure(check_health=True)`` also replaces one that stopped answering. A
forked process starts its own server rather than share its parent's.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import IO

import httpx

from openprogram.exceptions import LLMError
from openprogram.providers._wire import set_message
from openprogram.providers.local._embedded import _child
from openprogram.providers.local._embedded._progress import report
from openprogram.providers.local._embedded._threads import default_threads
from openprogram.providers.local._embedded._weights import ensure_weights
from openprogram.providers.local._profile import ModelProfile

__all__ = ["ServerOptions", "Supervisor"]

_LOG_TAIL_BYTES = 4000


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerOptions:
    """How the child server runs on this machine (what differs by model is in its profile)."""

    threads: int | None = None
    """CPU threads for generation; ``None``: ``$OPENPROGRAM_LOCAL_THREADS``, else the CPUs
    idle when the server starts (``_threads.default_threads``)."""
    prompt_cache_mib: int = 256
    """RAM for llama.cpp's prompt cache (its default, 8 GiB, is far more than this model needs)."""
    start_timeout_s: float = 180.0
    """How long the child may take to load the model and answer ``/health``."""


class Supervisor:
    """Owns at most one child server, of one embedded model, for this process. Thread-safe.

    Args:
        profile: The model it serves: its weights, chat template, context and temperature.
        options: How the child server runs.
    """

    def __init__(self, profile: ModelProfile, options: ServerOptions | None = None) -> None:
        self._profile = profile
        self._model = profile.model
        self._options = options or ServerOptions()
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self._url: str | None = None
        self._owner = os.getpid()
        self._atexit = False

    @property
    def model(self) -> str:
        """The id of the embedded model this supervisor serves."""
        return self._model

    @property
    def base_url(self) -> str | None:
        """``http://127.0.0.1:PORT/v1`` of a running server, else ``None``."""
        with self._lock:
            return f"{self._url}/v1" if self._url and self._alive() else None

    @property
    def pid(self) -> int | None:
        """Process id of a running child, else ``None``."""
        with self._lock:
            return self._proc.pid if self._proc is not None and self._alive() else None

    def ensure(self, *, check_health: bool = False) -> str:
        """The server's base URL (with ``/v1``), starting or restarting it as needed.

        Args:
            check_health: Also ask ``/health`` and replace a server that does not answer.

        Raises:
            ConfigurationError: The ``local`` extra is missing or its weights are broken.
            LLMError: The server did not come up (the message ends with its log).
        """
        with self._lock:
            self._forget_if_forked()
            if self._url and self._alive() and (not check_health or _healthy(self._url)):
                return f"{self._url}/v1"
            self._stop_locked()
            self._url = self._start_locked()
            return f"{self._url}/v1"

    def stop(self) -> None:
        """Stop the child if one runs (idempotent; also runs at interpreter exit)."""
        with self._lock:
            self._forget_if_forked()
            self._stop_locked()

    def _forget_if_forked(self) -> None:
        # In a forked copy of this process the server belongs to the parent: leave it alone.
        if os.getpid() != self._owner:
            self._proc, self._log, self._url, self._owner = None, None, None, os.getpid()

    def _alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def _start_locked(self) -> str:
        began = time.monotonic()
        profile = self._profile
        weights = ensure_weights(profile.weights)  # the first join takes a while
        config = {
            "model": str(weights),
            "template": profile.chat_template(),
            "context_tokens": profile.context_tokens,
            "temperature": profile.temperature,
            "threads": self._options.threads or default_threads(),
            "prompt_cache_mib": self._options.prompt_cache_mib,
            "start_timeout_s": self._options.start_timeout_s,
            "alias": self._model,
        }
        threads = config["threads"]
        report(
            f"starting the local model server ({self._model}, {threads} "
            f"thread{'' if threads == 1 else 's'})"
        )
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 -- lives as long as the child
        env = _child.child_env(os.environ)
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-c", _child.CHILD_CODE, json.dumps(config)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._log,
                env=env,
            )
        except OSError as exc:
            self._stop_locked()
            raise _start_error(f"cannot run {sys.executable}: {exc}", self._model) from exc
        if not self._atexit:
            atexit.register(self.stop)
            self._atexit = True
        deadline = time.monotonic() + self._options.start_timeout_s
        try:
            url = _await_ready_line(self._proc, deadline, self._model)
            _await_health(url, self._proc, deadline, self._model)
        except LLMError as err:
            tail = self._log_tail()
            self._stop_locked()
            set_message(err, f"{err.message}\n--- server log (last lines) ---\n{tail}")
            raise
        where = url.split("://", 1)[-1]
        report(f"local model ready on {where} after {time.monotonic() - began:.1f} s")
        return url

    def _stop_locked(self) -> None:
        proc, log = self._proc, self._log
        self._proc, self._log, self._url = None, None, None
        if proc is not None:
            _terminate(proc)
        if log is not None:
            log.close()

    def _log_tail(self) -> str:
        if self._log is None:
            return "(no log)"
        self._log.flush()
        size = self._log.seek(0, os.SEEK_END)
        self._log.seek(max(0, size - _LOG_TAIL_BYTES))
        return self._log.read().decode("utf-8", errors="replace").strip() or "(empty)"


def _start_error(message: str, model: str) -> LLMError:
    return LLMError(
        f"the local model server ({model}) did not start: {message}",
        reason="server",
        provider="local",
        model=model,
    )


def _await_ready_line(proc: subprocess.Popen[bytes], deadline: float, model: str) -> str:
    lines: queue.Queue[bytes] = queue.Queue()
    assert proc.stdout is not None
    stdout = proc.stdout
    threading.Thread(target=lambda: lines.put(stdout.readline()), daemon=True).start()
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=0.2).decode("utf-8", errors="replace").strip()
        except queue.Empty:
            if proc.poll() is not None:
                raise _start_error(
                    f"the process exited with code {proc.returncode}", model
                ) from None
            continue
        if line.startswith(_child.READY + " "):
            return line.removeprefix(_child.READY + " ").strip().rstrip("/")
        if not line:  # end of output: the process is exiting
            try:
                code = proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                raise _start_error("the process closed its output without a URL", model) from None
            raise _start_error(f"the process exited with code {code}", model)
        raise _start_error(f"unexpected first line from the server process: {line!r}", model)
    raise _start_error("it did not load the model in time (the machine may be busy)", model)


def _await_health(url: str, proc: subprocess.Popen[bytes], deadline: float, model: str) -> None:
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise _start_error(f"the process exited with code {proc.returncode}", model)
        if _healthy(url):
            return
        time.sleep(0.1)
    raise _start_error(f"{url}/health did not answer 200 in time", model)


def _healthy(url: str) -> bool:
    try:
        return httpx.get(f"{url}/health", timeout=5.0).status_code == 200
    except httpx.HTTPError:  # refused or timed out: simply not healthy (yet)
        return False


def _terminate(proc: subprocess.Popen[bytes]) -> None:
    if proc.stdin is not None:
        # A broken pipe means the child already died: there is nobody left to tell.
        with contextlib.suppress(OSError):
            proc.stdin.close()  # the child's cue to exit
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    if proc.stdout is not None:
        proc.stdout.close()
