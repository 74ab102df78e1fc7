"""The embedded servers of this process, one per model: is a model installed, start, stop.

Every function takes an embedded model's id (default ``LOCAL_MODEL``) and
finds what it needs in that model's profile.
"""

from __future__ import annotations

import importlib.util
import threading

from openprogram.exceptions import ConfigurationError
from openprogram.providers.local._embedded._server import Supervisor
from openprogram.providers.local._embedded._weights import (
    install_hint,
    missing_packages,
    verified_copy,
)
from openprogram.providers.local._profile import LOCAL_MODEL, profile_for, weights_for

__all__ = [
    "default_supervisor",
    "ensure_server",
    "local_available",
    "missing",
    "started_supervisors",
    "stop_server",
    "supervisor_for",
]

_supervisors: dict[str, Supervisor] = {}
_supervisors_lock = threading.Lock()


def supervisor_for(model: str = LOCAL_MODEL) -> Supervisor:
    """The process-wide supervisor of embedded model ``model`` (created on first call).

    Providers of the same model share its server; each model has its own.

    Raises:
        ConfigurationError: ``model`` is not an embedded model's id.
    """
    with _supervisors_lock:
        found = _supervisors.get(model)
        if found is None:
            found = _supervisors[model] = Supervisor(profile_for(model))
        return found


def started_supervisors() -> list[Supervisor]:
    """The supervisors ``supervisor_for`` has made in this process, in creation order."""
    with _supervisors_lock:
        return list(_supervisors.values())


def default_supervisor() -> Supervisor:
    """The process-wide supervisor of the default model (created on first call, not at import)."""
    return supervisor_for(LOCAL_MODEL)


def missing(model: str = LOCAL_MODEL) -> list[str]:
    """The distributions ``model`` needs that are not installed (nothing is imported).

    Its weight packages count only while the cache holds no verified copy of
    the joined weights: once joined, the server reads that file alone. A
    requantized model (``"qwen2.5-coder-0.5b-q4_0"``) also needs numpy until
    its copy is made.

    Raises:
        ConfigurationError: ``model`` is not an embedded model's id.
    """
    spec = weights_for(model)
    absent = [] if importlib.util.find_spec("xllamacpp") is not None else ["xllamacpp"]
    cached = verified_copy(spec)
    made = cached is not None and spec.faster is not None and cached.name == spec.faster.filename
    if spec.faster is not None and not made and importlib.util.find_spec("numpy") is None:
        absent.append("numpy")
    if cached is not None:
        return absent
    return absent + missing_packages(spec)


def local_available(model: str = LOCAL_MODEL) -> bool:
    """Whether ``model`` can start: ``xllamacpp``, and its weights verified in the cache
    or its weight packages installed.

    The default model comes with the ``local`` extra, ``"qwen2.5-coder-1.5b"``
    with ``local-large``. Nothing is imported or started; of the weights, only
    the cache's small marker is read (and the file ``stat``-ed).

    Raises:
        ConfigurationError: ``model`` is not an embedded model's id.
    """
    return not missing(model)


def ensure_server(model: str = LOCAL_MODEL) -> str:
    """Start the embedded server of ``model`` if it is not running; return its base URL.

    The first call in a process joins and verifies the weights if the cache
    has no verified copy, then starts the server process and loads the model
    (seconds, see ``docs/local-model.md``). Later calls return at once. Each
    model has its own server. Blocking: from async code use
    ``await asyncio.to_thread(ensure_server)``.

    Args:
        model: An embedded model's id; default ``LOCAL_MODEL``.

    Returns:
        ``http://127.0.0.1:PORT/v1``, ready for Chat Completions.

    Raises:
        ConfigurationError: ``model`` is unknown, ``xllamacpp`` is missing, the cache
            holds no verified copy of its weights and its weight packages are missing,
            or its weights are broken.
        LLMError: The server did not come up (the message ends with its log).
    """
    absent = missing(model)
    if absent:
        spec = weights_for(model)
        raise ConfigurationError(
            f"the local model {model} needs the '{spec.extra}' extra (missing: "
            f"{', '.join(absent)}): {install_hint(spec)}"
        )
    return supervisor_for(model).ensure()


def stop_server(model: str | None = None) -> None:
    """Stop the embedded server of ``model``, or every one of this process (``None``).

    A stopped server restarts on next use.

    Raises:
        ConfigurationError: ``model`` is not an embedded model's id.
    """
    if model is not None:
        weights_for(model)  # refuses an unknown id
    for supervisor in started_supervisors():
        if model is None or supervisor.model == model:
            supervisor.stop()
