"""The embedded model's machinery: weights, the GGUF requantiser, the server process.

A model's profile (``.._profile``) says which weights and template it uses;
these modules join and check the weights, make the requantized copy, and run
one server process per model.
"""

from openprogram.providers.local._embedded._gguf import GGUFError, read_layout
from openprogram.providers.local._embedded._progress import (
    PROGRESS_ENV_VAR,
    megabytes,
    progress_to,
    report,
)
from openprogram.providers.local._embedded._server import ServerOptions, Supervisor
from openprogram.providers.local._embedded._supervisors import (
    default_supervisor,
    ensure_server,
    local_available,
    missing,
    started_supervisors,
    stop_server,
    supervisor_for,
)
from openprogram.providers.local._embedded._threads import THREADS_ENV_VAR, default_threads
from openprogram.providers.local._embedded._weights import (
    cache_dir,
    ensure_weights,
    install_hint,
    missing_packages,
    part_paths,
    verified_copy,
)

__all__ = [
    "PROGRESS_ENV_VAR",
    "THREADS_ENV_VAR",
    "GGUFError",
    "ServerOptions",
    "Supervisor",
    "cache_dir",
    "default_supervisor",
    "default_threads",
    "ensure_server",
    "ensure_weights",
    "install_hint",
    "local_available",
    "megabytes",
    "missing",
    "missing_packages",
    "part_paths",
    "progress_to",
    "read_layout",
    "report",
    "started_supervisors",
    "stop_server",
    "supervisor_for",
    "verified_copy",
]
