"""First-use progress of the embedded model: one line per step, on stderr.

Joining the weights and starting the server take seconds on first use; the
lines say what is happening (with sizes) and when the model is ready::

    openprogram: joining the local model's weights: 6 parts, 491.4 MB -> ~/.cache/openprogram/…
    openprogram: weights verified (491.4 MB, sha256 1d9614638d18…) in 2.3 s
    openprogram: starting the local model server (qwen2.5-coder-0.5b, 1 thread)
    openprogram: local model ready on 127.0.0.1:40123 after 4.4 s

``OPENPROGRAM_LOCAL_PROGRESS=0`` silences them; ``progress_to(fn)`` sends
them to ``fn`` instead (the command line's ``--json`` turns them into JSON
lines). Process-wide, like the server itself.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Callable, Iterator

__all__ = ["PROGRESS_ENV_VAR", "megabytes", "progress_to", "report"]

PROGRESS_ENV_VAR = "OPENPROGRAM_LOCAL_PROGRESS"
"""Set to ``0`` to silence the first-use progress lines."""

_lock = threading.Lock()
_sink: Callable[[str], object] | None = None


def report(text: str) -> None:
    """Say one progress step (to the sink set by ``progress_to``, else stderr)."""
    with _lock:
        sink = _sink
    if sink is not None:
        sink(text)
        return
    if os.environ.get(PROGRESS_ENV_VAR, "").strip().lower() in ("0", "false", "no", "off"):
        return
    print(f"openprogram: {text}", file=sys.stderr, flush=True)


@contextlib.contextmanager
def progress_to(sink: Callable[[str], object]) -> Iterator[None]:
    """Send progress lines to ``sink(text)`` inside the block."""
    global _sink  # noqa: PLW0603 -- one process-wide destination, guarded by _lock
    with _lock:
        previous, _sink = _sink, sink
    try:
        yield
    finally:
        with _lock:
            _sink = previous


def megabytes(size: int) -> str:
    """``491400064`` -> ``"491.4 MB"``."""
    return f"{size / 1e6:.1f} MB"
