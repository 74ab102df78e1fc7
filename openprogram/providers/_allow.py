"""The switch that forbids real model requests (for test suites), checked by every real provider.

``OPENPROGRAM_ALLOW_MODEL_REQUESTS=0`` (also ``false``/``no``/``off``) blocks
them for the whole process; ``allow_model_requests(False)`` (re-exported as
``openprogram.testing.block_model_requests()``) blocks them for a ``with``
block and ``allow_model_requests(True)`` re-allows them inside a blocked
suite. The context managers win over the variable. The setting is process-wide
(it must also hold in worker threads and nested runs), so toggle it from one
thread at a time.

Other processes: for the length of the block the context managers also set
the variable (``0`` or ``1``) in ``os.environ``, restoring it on exit, so a
child process started inside the block (a subprocess, Ray workers started by
``ray.init`` there) inherits the setting. Ray workers already running are
reached by ``batch.map(backend="ray")``, which runs each item under the
setting the driver has when the batch starts.

Real providers call ``check_model_request`` before anything goes out: the
HTTP providers at the top of ``HttpProvider.stream``, the local provider
before it would start its embedded server. The fakes in
``openprogram.testing`` never call it.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator

from openprogram.exceptions import ConfigurationError, ModelRequestsBlocked

__all__ = [
    "ALLOW_ENV_VAR",
    "allow_model_requests",
    "block_model_requests",
    "check_model_request",
    "model_requests_allowed",
]

ALLOW_ENV_VAR = "OPENPROGRAM_ALLOW_MODEL_REQUESTS"
"""Set to ``0`` to make every real provider request raise ``ModelRequestsBlocked``."""

_FALSE = frozenset({"0", "false", "no", "off"})
_TRUE = frozenset({"", "1", "true", "yes", "on"})
_lock = threading.Lock()
_override: bool | None = None


def model_requests_allowed() -> bool:
    """Whether real providers may send requests now (context manager, else the variable).

    Raises:
        ConfigurationError: The variable holds something other than a yes/no value.
    """
    with _lock:
        override = _override
    if override is not None:
        return override
    raw = os.environ.get(ALLOW_ENV_VAR, "").strip().lower()
    if raw in _FALSE:
        return False
    if raw in _TRUE:
        return True
    raise ConfigurationError(
        f"{ALLOW_ENV_VAR}={raw!r} is not understood: use 0 to block real model requests "
        "or 1 to allow them"
    )


@contextlib.contextmanager
def allow_model_requests(allowed: bool = True) -> Iterator[None]:
    """Allow (or, with ``False``, block) real model requests inside the block.

    Child processes started inside the block inherit the setting through the
    variable. Restores the previous setting (and the variable) on exit, also when
    the block raises.
    """
    global _override  # noqa: PLW0603 -- the one process-wide switch, guarded by _lock
    with _lock:
        previous, _override = _override, bool(allowed)
        previous_env = os.environ.get(ALLOW_ENV_VAR)
        os.environ[ALLOW_ENV_VAR] = "1" if allowed else "0"  # for child processes
    try:
        yield
    finally:
        with _lock:
            _override = previous
            if previous_env is None:
                os.environ.pop(ALLOW_ENV_VAR, None)
            else:
                os.environ[ALLOW_ENV_VAR] = previous_env


def check_model_request(provider: str, target: str) -> None:
    """Raise if real model requests are blocked; called by real providers before sending.

    Args:
        provider: The provider's name, e.g. ``"openai"``.
        target: Where the request would go (a URL, or what would be started).

    Raises:
        ModelRequestsBlocked: Requests are blocked; nothing was sent or started.
    """
    if model_requests_allowed():
        return
    raise ModelRequestsBlocked(
        f"blocked a real model request: provider {provider!r} would have sent it to "
        f"{target}, but model requests are blocked (by {_blocked_by()}). Use a fake from "
        "openprogram.testing (ScriptedProvider, FunctionProvider, SchemaProvider), or allow "
        f"real requests: unset {ALLOW_ENV_VAR} (or set it to 1), or wrap the code in "
        "openprogram.testing.allow_model_requests()"
    )


def _blocked_by() -> str:
    with _lock:
        override = _override
    if override is not None:
        return "openprogram.testing.block_model_requests()"
    return f"{ALLOW_ENV_VAR}={os.environ.get(ALLOW_ENV_VAR)}"


def block_model_requests() -> contextlib.AbstractContextManager[None]:
    """Block real model requests inside a ``with`` block (``allow_model_requests(False)``).

    Example:
        >>> from openprogram import Runtime
        >>> from openprogram.exceptions import ModelRequestsBlocked
        >>> with block_model_requests():
        ...     try:
        ...         Runtime("openai:gpt-4o-mini").exec("hi", tools=[])
        ...     except ModelRequestsBlocked as exc:
        ...         print(str(exc)[:60])
        blocked a real model request: provider 'openai' would have s
    """
    return allow_model_requests(False)
