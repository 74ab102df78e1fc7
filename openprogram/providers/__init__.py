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
then, naming the variable to set. The provider classes themselves load on
first use (their wire modules bring httpx), so ``import openprogram`` stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from openprogram.providers._resolve import (
    LOCAL_MODEL_STRING,
    OLLAMA_BASE_URL,
    PROVIDER_CLASSES,
    PROVIDER_PREFIXES,
    default_model_string,
    provider_class,
    resolve_provider,
)
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


def __getattr__(name: str) -> Any:
    # The provider classes load on first use: their wire modules import httpx, and
    # `import openprogram` stays light (PROVIDER_CLASSES names each one's module).
    if name not in PROVIDER_CLASSES:
        raise AttributeError(f"module 'openprogram.providers' has no attribute {name!r}")
    value = provider_class(name)
    globals()[name] = value
    return value
