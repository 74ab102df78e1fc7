"""``resolve_provider``: provider strings, and what is said when configuration is missing."""

from __future__ import annotations

import pytest

from openprogram.exceptions import ConfigurationError
from openprogram.providers import (
    OLLAMA_BASE_URL,
    PROVIDER_PREFIXES,
    AnthropicProvider,
    BedrockProvider,
    GeminiProvider,
    OpenAIProvider,
    OpenAIResponsesProvider,
    Provider,
    resolve_provider,
)

from ._helpers import drive, request
from ._server import Reply, WireServer, sse

pytestmark = pytest.mark.usefixtures("clean_env")


@pytest.mark.parametrize(
    ("spec", "cls", "name", "model"),
    [
        ("openai:gpt-4o-mini", OpenAIProvider, "openai", "gpt-4o-mini"),
        ("openai-responses:gpt-5", OpenAIResponsesProvider, "openai-responses", "gpt-5"),
        ("anthropic:claude-sonnet-4-5", AnthropicProvider, "anthropic", "claude-sonnet-4-5"),
        ("gemini:gemini-2.5-flash", GeminiProvider, "gemini", "gemini-2.5-flash"),
        (
            "bedrock:anthropic.claude-3-5-haiku-20241022-v1:0",
            BedrockProvider,
            "bedrock",
            "anthropic.claude-3-5-haiku-20241022-v1:0",
        ),
        ("ollama:llama3.2", OpenAIProvider, "ollama", "llama3.2"),
        ("OpenAI:gpt-4o", OpenAIProvider, "openai", "gpt-4o"),
        ("openai:", OpenAIProvider, "openai", None),
    ],
)
def test_provider_strings(spec: str, cls: type, name: str, model: str | None) -> None:
    provider = resolve_provider(spec)
    assert type(provider) is cls
    assert isinstance(provider, Provider)
    assert (provider.name, provider.model) == (name, model)


def test_ollama_defaults_to_the_local_server_and_reads_ollama_host(
    clean_env: pytest.MonkeyPatch,
) -> None:
    assert resolve_provider("ollama:qwen3").base_url == OLLAMA_BASE_URL  # type: ignore[attr-defined]
    for host, url in [
        ("10.0.0.5:11500", "http://10.0.0.5:11500/v1"),
        ("0.0.0.0", "http://0.0.0.0:11434/v1"),
        ("https://ollama.example.com", "https://ollama.example.com/v1"),
    ]:
        clean_env.setenv("OLLAMA_HOST", host)
        assert resolve_provider("ollama:qwen3").base_url == url  # type: ignore[attr-defined]


def test_ollama_never_sends_an_openai_key(wire: WireServer, clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("OPENAI_API_KEY", "sk-should-stay-home")
    clean_env.setenv("OLLAMA_HOST", wire.url)
    wire.push(
        Reply(
            chunks=[
                sse(
                    {
                        "choices": [
                            {"index": 0, "delta": {"content": "hi"}, "finish_reason": "stop"}
                        ]
                    },
                    "[DONE]",
                )
            ]
        )
    )
    assert drive(resolve_provider("ollama:llama3.2"), request()).message.text == "hi"
    assert wire.requests[0].path == "/v1/chat/completions"
    assert "authorization" not in wire.requests[0].headers


def test_openai_compatible_needs_openai_base_url(
    wire: WireServer, clean_env: pytest.MonkeyPatch
) -> None:
    with pytest.raises(ConfigurationError) as info:
        resolve_provider("openai-compatible:qwen")
    assert "set the OPENAI_BASE_URL environment variable" in str(info.value)
    clean_env.setenv("OPENAI_BASE_URL", f"{wire.url}/v1")
    provider = resolve_provider("openai-compatible:qwen")
    assert (provider.name, provider.base_url) == ("openai-compatible", f"{wire.url}/v1")  # type: ignore[attr-defined]


@pytest.mark.parametrize("spec", ["gpt-4o", "azure:gpt-4o", "", "llama:3"])
def test_unknown_strings_name_the_known_prefixes(spec: str) -> None:
    with pytest.raises(ConfigurationError) as info:
        resolve_provider(spec)
    message = str(info.value)
    assert repr(spec) in message
    for prefix in PROVIDER_PREFIXES:
        assert f'"{prefix}:<model>"' in message


@pytest.mark.parametrize(
    ("spec", "variable"),
    [
        ("openai:gpt-4o-mini", "OPENAI_API_KEY"),
        ("openai-responses:gpt-5", "OPENAI_API_KEY"),
        ("anthropic:claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
        ("gemini:gemini-2.5-flash", "GEMINI_API_KEY"),
    ],
)
def test_a_missing_key_is_reported_at_the_first_request_naming_the_variable(
    spec: str, variable: str
) -> None:
    provider = resolve_provider(spec)  # constructing never fails for a missing key
    with pytest.raises(ConfigurationError) as info:
        drive(provider, request())
    assert f"no API key: set the {variable} environment variable" in str(info.value)
