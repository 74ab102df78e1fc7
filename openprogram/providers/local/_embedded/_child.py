"""The server's child process: its environment, and its side (load the model, serve, exit).

The parent (``_server.Supervisor``) runs ``CHILD_CODE`` in a new interpreter
with the configuration as JSON in ``argv[1]``. The child loads the model,
binds a free port on 127.0.0.1, prints ``READY <url>`` and then blocks reading
its stdin: it exits when the parent closes the pipe or dies in any way.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["CHILD_CODE", "READY", "child_env", "child_main"]

READY = "OPENPROGRAM-LOCAL-READY"
"""What the child's first line starts with, followed by its root URL."""
CHILD_CODE = "from openprogram.providers.local._embedded._child import child_main; child_main()"
"""The child's ``python -c`` program."""
_PACKAGE_ROOT = Path(__file__).resolve().parents[4]  # the folder holding openprogram/

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


def child_main() -> None:
    """Entry point of the child process: serve until stdin closes (internal)."""
    config = json.loads(sys.argv[1])
    server, url = _start_xllamacpp(config)
    sys.stdout.write(f"{READY} {url}\n")
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
    params.model_alias = {str(config["alias"])}
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
