"""Start and supervise the embedded llama.cpp server (xllamacpp) in a child process.

One server per embedded model per process (``supervisor_for``), started on
first use: the child loads the model, binds a free port on 127.0.0.1 and
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
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path
from typing import IO, Any

import httpx

from openprogram.exceptions import ConfigurationError, LLMError
from openprogram.providers._wire import set_message
from openprogram.providers.local._progress import report
from openprogram.providers.local._weights import LOCAL_MODEL, ensure_weights, weights_for

__all__ = [
    "LOCAL_MODEL",
    "ServerOptions",
    "Supervisor",
    "chat_template",
    "default_supervisor",
    "started_supervisors",
    "supervisor_for",
]

_READY = "OPENPROGRAM-LOCAL-READY"
_CHILD_CODE = "from openprogram.providers.local._server import child_main; child_main()"
_PACKAGE_ROOT = Path(__file__).resolve().parents[3]  # the folder holding openprogram/
_LOG_TAIL_BYTES = 4000
_MAX_THREADS = 8
"""More generation threads than this do not speed up a 0.5B model."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerOptions:
    """How the child server is configured."""

    context_tokens: int = 8192
    """KV-cache size in tokens (the model supports 32k; 8k keeps RAM near 0.7 GB)."""
    temperature: float = 0.0
    """Default sampling temperature when a request sets none: greedy, so the same prompt
    gives the same tool call (steadier for a 0.5B model, and reproducible in tests)."""
    threads: int | None = None
    """CPU threads for generation; ``None``: ``$OPENPROGRAM_LOCAL_THREADS``, else from the load
    (all CPUs while one is idle, else half; see ``_default_threads``)."""
    prompt_cache_mib: int = 256
    """RAM for llama.cpp's prompt cache (its default, 8 GiB, is far more than this model needs)."""
    start_timeout_s: float = 180.0
    """How long the child may take to load the model and answer ``/health``."""


def chat_template() -> str:
    """The Jinja chat template shipped with openprogram (see ``docs/local-model.md``)."""
    files = resources.files("openprogram.providers.local")
    return files.joinpath("chat_template.jinja").read_text(encoding="utf-8")


class Supervisor:
    """Owns at most one child server, of one embedded model, for this process. Thread-safe.

    Args:
        options: How the child server is configured.
        model: The embedded model it serves (a key of ``LOCAL_MODELS``).

    Raises:
        ConfigurationError: ``model`` is not an embedded model's id.
    """

    def __init__(self, options: ServerOptions | None = None, *, model: str = LOCAL_MODEL) -> None:
        self._spec = weights_for(model)
        self._model = model
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
        weights = ensure_weights(self._spec)  # the first join takes a while
        config = {"model": str(weights), "template": chat_template(), **asdict(self._options)}
        config["threads"] = self._options.threads or _default_threads()
        config["alias"] = self._model
        threads = config["threads"]
        report(
            f"starting the local model server ({self._model}, {threads} "
            f"thread{'' if threads == 1 else 's'})"
        )
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 -- lives as long as the child
        env = child_env(os.environ)
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-c", _CHILD_CODE, json.dumps(config)],
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


_supervisors: dict[str, Supervisor] = {}
_supervisors_lock = threading.Lock()


_CHILD_ENV_NAMES = frozenset(
    {"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "LANGUAGE", "TZ", "TMPDIR",
     "TEMP", "TMP", "PYTHONHOME", "LD_LIBRARY_PATH", "DYLD_LIBRARY_PATH", "SYSTEMROOT",
     "SYSTEMDRIVE", "WINDIR", "COMSPEC", "PATHEXT", "USERPROFILE", "APPDATA", "LOCALAPPDATA",
     "HOMEDRIVE", "HOMEPATH", "USERNAME", "NUMBER_OF_PROCESSORS", "PROCESSOR_ARCHITECTURE"}
)  # fmt: skip
_CHILD_ENV_PREFIXES = ("LC_", "OMP_", "GGML_", "LLAMA_", "CUDA_", "HIP_", "ROCR_", "VK_")
# What a Python interpreter and llama.cpp need (locale, temp dir, native libraries, thread
# and GPU tuning), and nothing else: no API keys or tokens reach the child (as for MCP
# stdio servers).


def child_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The child's environment: the allowed names of ``environ`` and a ``PYTHONPATH``
    that finds this ``openprogram`` first."""
    env = {
        name: value
        for name, value in environ.items()
        if name in _CHILD_ENV_NAMES or name.startswith(_CHILD_ENV_PREFIXES)
    }
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(_PACKAGE_ROOT), environ.get("PYTHONPATH", "")) if p
    )
    return env


def supervisor_for(model: str = LOCAL_MODEL) -> Supervisor:
    """The process-wide supervisor of embedded model ``model`` (created on first call).

    Providers of the same model share its server; each model has its own.

    Raises:
        ConfigurationError: ``model`` is not an embedded model's id.
    """
    with _supervisors_lock:
        found = _supervisors.get(model)
        if found is None:
            found = _supervisors[model] = Supervisor(model=model)
        return found


def started_supervisors() -> list[Supervisor]:
    """The supervisors ``supervisor_for`` has made in this process, in creation order."""
    with _supervisors_lock:
        return list(_supervisors.values())


def default_supervisor() -> Supervisor:
    """The process-wide supervisor of the default model (created on first call, not at import)."""
    return supervisor_for(LOCAL_MODEL)


def _default_threads() -> int:
    """Every CPU while one is idle, else half of them; ``$OPENPROGRAM_LOCAL_THREADS`` wins.

    Generation time is what counts (prompts are short and mostly cached), and
    llama.cpp's generation threads wait for each other at every token. Measured
    on 2 cores (the demo's three slowest requests): idle, 2 threads take 0.6x
    the time of 1; with one core busy, 2 threads take 2.1x (a thread that
    lost its core stalls the other). So the count is the CPUs idle when the
    server starts (``_busy_cpus``; a CPU less than 70 % used counts as idle),
    at least 1 and at most 8.
    """
    configured = os.environ.get("OPENPROGRAM_LOCAL_THREADS", "").strip()
    if configured:
        try:
            return max(1, int(configured))
        except ValueError:
            raise ConfigurationError(
                f"OPENPROGRAM_LOCAL_THREADS={configured!r} is not a whole number of threads"
            ) from None
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    cpus = min(cpus or 2, _MAX_THREADS)
    return max(1, cpus - int(_busy_cpus(cpus) + 0.3))


_PROC_STAT = Path("/proc/stat")
_SAMPLE_S = 0.25
"""How long the CPUs are watched before the server starts (it takes seconds to load)."""
_wait = time.sleep


def _busy_cpus(cpus: int) -> float:
    """How many CPUs other programs keep busy now.

    Measured over ``_SAMPLE_S`` from the kernel's CPU times (Linux). Not the
    load average: it trails the last minute, so the run before (this model
    server's own threads, a test) made the next start take half the CPUs for
    a minute after the CPUs were idle again (measured: load 1.8 on 2 idle
    CPUs, and the README tour 40 % slower on 1 thread). Elsewhere the
    1-minute load average; none at all: every CPU busy, the safe side.
    """
    before = _cpu_times()
    if before is not None:
        _wait(_SAMPLE_S)
        after = _cpu_times()
        if after is not None and after[1] > before[1]:
            idle = (after[0] - before[0]) / (after[1] - before[1])
            return (os.cpu_count() or cpus) * (1.0 - idle)
    try:
        return os.getloadavg()[0]
    except OSError:  # no load average on this platform: assume busy, the safe side
        return float(cpus)


def _cpu_times() -> tuple[int, int] | None:
    """Idle and total time of all CPUs since boot from ``/proc/stat``, or ``None``.

    Waiting for I/O counts as idle (the CPU is free); time the hypervisor
    stole counts as busy (it is not).
    """
    try:
        with _PROC_STAT.open(encoding="ascii") as stat:
            fields = stat.readline().split()
        times = [int(v) for v in fields[1:9]]  # user nice system idle iowait irq softirq steal
    except (OSError, ValueError):  # not Linux, or a layout this reader does not know
        return None
    if not fields or fields[0] != "cpu" or len(times) < 5:
        return None
    return times[3] + times[4], sum(times)


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
        if line.startswith(_READY + " "):
            return line.removeprefix(_READY + " ").strip().rstrip("/")
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


# -- the child side -------------------------------------------------------------------------


def child_main() -> None:
    """Entry point of the child process: serve until stdin closes (internal)."""
    config = json.loads(sys.argv[1])
    server, url = _start_xllamacpp(config)
    sys.stdout.write(f"{_READY} {url}\n")
    sys.stdout.flush()
    os.dup2(2, 1)  # nobody reads the pipe from now on: later stdout output goes to the log
    sys.stdin.buffer.read()  # blocks until the parent closes the pipe or dies
    del server
    # Skip interpreter teardown: llama.cpp's server threads need not be joined to exit.
    os._exit(0)


def _start_xllamacpp(config: Mapping[str, Any]) -> tuple[object, str]:
    """Load the model and start serving; returns the server object and its root URL."""
    # Imported here, in the child only: the optional extra must not load with openprogram.
    import xllamacpp  # type: ignore[import-untyped,import-not-found,unused-ignore]  # noqa: PLC0415

    params = xllamacpp.CommonParams()
    params.model.path = config["model"]
    params.chat_template = config["template"]
    params.use_jinja = True
    params.hostnames = ["127.0.0.1"]
    params.port = 0  # the OS picks a free port; listening_address reports it
    params.model_alias = {str(config.get("alias") or LOCAL_MODEL)}
    params.n_ctx = int(config["context_tokens"])
    params.n_parallel = 1
    params.cache_ram_mib = int(config["prompt_cache_mib"])
    params.sampling.temp = float(config["temperature"])
    # Loopback only, and no web page may read its answers: no CORS origin, no UI, no slots.
    params.cors_origins = ""
    params.cors_origins_explicit = True
    params.ui = False
    params.endpoint_slots = False
    params.verbosity = 2  # warnings and errors, e.g. the model output llama.cpp could not parse
    params.cpuparams.n_threads = int(config["threads"])
    params.cpuparams_batch.n_threads = int(config["threads"])
    server = xllamacpp.Server(params)
    return server, str(server.listening_address)
