"""llama.cpp servers for the raw clients, started with openprogram's own launch code.

A raw client's server is the embedded server with one thing changed: its
chat template. ``openprogram.providers.local._embedded._child.child_main`` (what
``LocalProvider`` runs) takes its whole configuration as JSON, so we give it
the same model and options ``Supervisor`` would, and either our template
(``chat_template.jinja``, or a file given with ``--template``) or ``""``,
which makes llama.cpp use the template stored in the GGUF (``--jinja`` with
the model's own template). Readiness and shutdown use the same helpers as
``Supervisor``: the child prints its URL, answers ``/health``, and exits
when its stdin closes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO

__all__ = ["RawServer"]


class RawServer:
    """One llama.cpp child process serving an embedded model with a chosen template.

    Args:
        template: Jinja chat template text; ``""`` uses the GGUF's built-in one.
        model: Which embedded model (``LOCAL_MODELS``); the default one if not given.
    """

    def __init__(self, template: str, model: str | None = None) -> None:
        self._template = template
        self._model = model
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self.base_url = ""
        self.start_seconds = 0.0

    def __enter__(self) -> RawServer:
        from openprogram.providers.local._embedded import _child, default_threads, ensure_weights
        from openprogram.providers.local._embedded import _server as srv
        from openprogram.providers.local._profile import profile_for

        profile = profile_for(self._model)
        options = srv.ServerOptions()
        config = {
            "model": str(ensure_weights(profile.weights)),
            "template": self._template,
            "context_tokens": profile.context_tokens,
            "temperature": profile.temperature,
            "threads": options.threads or default_threads(),
            "prompt_cache_mib": options.prompt_cache_mib,
            "start_timeout_s": options.start_timeout_s,
            "alias": profile.model,
        }
        env = dict(os.environ)
        root = str(Path(srv.__file__).resolve().parents[4])
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
        self._log = tempfile.NamedTemporaryFile(prefix="bfcl-server-", suffix=".log")
        start = time.monotonic()
        self._proc = subprocess.Popen(
            [sys.executable, "-c", _child.CHILD_CODE, json.dumps(config)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            env=env,
        )
        deadline = time.monotonic() + options.start_timeout_s
        try:
            url = srv._await_ready_line(self._proc, deadline, config["alias"])
            srv._await_health(url, self._proc, deadline, config["alias"])
        except Exception:  # any failure to come up: stop the child, then report it as is
            self.__exit__(None, None, None)
            raise
        self.start_seconds = time.monotonic() - start
        self.base_url = f"{url}/v1"
        return self

    def __exit__(self, *exc: object) -> None:
        from openprogram.providers.local._embedded import _server as srv

        proc, log = self._proc, self._log
        self._proc, self._log = None, None
        if proc is not None:
            srv._terminate(proc)
        if log is not None:
            log.close()
