"""``temperature``, ``max_tokens`` and ``seed`` reach each wire's own field.

Set on ``Runtime(...)`` or ``exec(...)`` (the exec wins), carried by
``ProviderRequest`` and omitted from the body when ``None``. A wire with no
seed field refuses ``seed`` with a ``UserError`` before anything is sent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from openprogram import Runtime, UserError
from openprogram.providers import (
    AnthropicProvider,
    BedrockProvider,
    GeminiProvider,
    OpenAIProvider,
    OpenAIResponsesProvider,
)
from openprogram.providers.local import LocalProvider

from . import test_anthropic, test_bedrock, test_gemini, test_openai_responses
from ._server import Reply, Seen, WireServer, openai_ok

pytestmark = pytest.mark.usefixtures("clean_env")


def _bedrock_reply() -> Reply:
    return test_bedrock.stream_reply(*test_bedrock.text_frames())


def _fields(path: tuple[str, ...]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def pick(body: dict[str, Any]) -> dict[str, Any]:
        for key in path:
            body = body.get(key) or {}
        return body

    return pick


# name: (factory, reply, where the fields sit, expected mapping, seed supported)
WIRES: dict[str, tuple[Callable[[str], Any], Callable[[], Reply], Any, dict[str, str], bool]] = {
    "openai-compatible": (
        lambda url: OpenAIProvider(base_url=f"{url}/v1", model="m"),
        openai_ok,
        _fields(()),
        {"temperature": "temperature", "max_tokens": "max_tokens", "seed": "seed"},
        True,
    ),
    "openai-host-field": (
        lambda url: OpenAIProvider(
            base_url=f"{url}/v1", model="m", max_tokens_field="max_completion_tokens"
        ),
        openai_ok,
        _fields(()),
        {"temperature": "temperature", "max_tokens": "max_completion_tokens", "seed": "seed"},
        True,
    ),
    "openai-responses": (
        lambda url: OpenAIResponsesProvider(base_url=f"{url}/v1", api_key="k", model="m"),
        test_openai_responses.text_reply,
        _fields(()),
        {"temperature": "temperature", "max_tokens": "max_output_tokens"},
        False,
    ),
    "anthropic": (
        lambda url: AnthropicProvider(base_url=url, api_key="k", model="m"),
        test_anthropic.text_reply,
        _fields(()),
        {"temperature": "temperature", "max_tokens": "max_tokens"},
        False,
    ),
    "gemini": (
        lambda url: GeminiProvider(base_url=url, api_key="k", model="m"),
        test_gemini.text_reply,
        _fields(("generationConfig",)),
        {"temperature": "temperature", "max_tokens": "maxOutputTokens", "seed": "seed"},
        True,
    ),
    "bedrock": (
        lambda url: BedrockProvider(endpoint_url=url, api_key="k", model="m", region="us-east-1"),
        _bedrock_reply,
        _fields(("inferenceConfig",)),
        {"temperature": "temperature", "max_tokens": "maxTokens"},
        False,
    ),
    "local": (
        lambda url: LocalProvider(base_url=f"{url}/v1"),
        openai_ok,
        _fields(()),
        {"temperature": "temperature", "max_tokens": "max_tokens", "seed": "seed"},
        True,
    ),
}

VALUES = {"temperature": 0.3, "max_tokens": 77, "seed": 1234}


def _sent(wire: WireServer) -> dict[str, Any]:
    seen: Seen = wire.requests[-1]
    return dict(seen.json)


@pytest.mark.parametrize("name", sorted(WIRES))
def test_each_option_reaches_the_wire_field(name: str, wire: WireServer) -> None:
    factory, reply, pick, mapping, _ = WIRES[name]
    wire.push(reply())
    options = {k: v for k, v in VALUES.items() if k in mapping}
    assert Runtime(factory(wire.url)).exec("hi", tools=[], **options) == "ok"
    fields = pick(_sent(wire))
    assert {mapping[k]: fields.get(mapping[k]) for k in options} == {
        mapping[k]: v for k, v in options.items()
    }


@pytest.mark.parametrize("name", sorted(WIRES))
def test_unset_options_are_omitted(name: str, wire: WireServer) -> None:
    factory, reply, pick, _, _ = WIRES[name]
    wire.push(reply())
    Runtime(factory(wire.url)).exec("hi", tools=[])
    body = _sent(wire)
    fields = pick(body)
    absent = {
        "temperature",
        "seed",
        "max_completion_tokens",
        "max_output_tokens",
        "maxOutputTokens",
    }
    if name != "anthropic":  # Anthropic requires max_tokens: the provider's default is sent
        absent |= {"max_tokens", "maxTokens"}
    assert not absent & set(fields)
    assert not absent & set(body)
    if name == "anthropic":
        assert body["max_tokens"] == 4096


@pytest.mark.parametrize("name", sorted(n for n, w in WIRES.items() if not w[4]))
def test_seed_on_a_wire_without_one_is_refused_before_sending(name: str, wire: WireServer) -> None:
    factory, reply, _, _, _ = WIRES[name]
    wire.push(reply())
    with pytest.raises(UserError, match="seed=5") as info:
        Runtime(factory(wire.url)).exec("hi", tools=[], seed=5)
    assert "drop seed=" in str(info.value)
    assert wire.requests == []


def test_exec_overrides_the_runtime_and_the_runtime_applies_otherwise(wire: WireServer) -> None:
    rt = Runtime(
        OpenAIProvider(base_url=f"{wire.url}/v1", model="m"),
        temperature=0.9,
        max_tokens=50,
        seed=1,
    )
    wire.push(openai_ok(), openai_ok())
    rt.exec("hi", tools=[])
    first = _sent(wire)
    rt.exec("hi", tools=[], temperature=0.0, seed=2)
    second = _sent(wire)
    assert (first["temperature"], first["max_tokens"], first["seed"]) == (0.9, 50, 1)
    assert (second["temperature"], second["max_tokens"], second["seed"]) == (0.0, 50, 2)


def test_openai_host_uses_max_completion_tokens_by_default() -> None:
    from openprogram.providers._http_provider import HttpProvider
    from openprogram.providers.base import ProviderRequest

    def body(provider: HttpProvider) -> dict[str, Any]:
        req = ProviderRequest(model="m", system=None, messages=(), max_tokens=9)
        return provider._body(req, "m", stream=False)

    assert body(OpenAIProvider(api_key="k"))["max_completion_tokens"] == 9
    assert "max_tokens" not in body(OpenAIProvider(api_key="k"))
    assert body(OpenAIProvider(base_url="http://127.0.0.1:1/v1"))["max_tokens"] == 9


def test_anthropic_max_tokens_replaces_the_default(wire: WireServer) -> None:
    wire.push(test_anthropic.text_reply())
    Runtime(AnthropicProvider(base_url=wire.url, api_key="k", model="m")).exec(
        "hi", tools=[], max_tokens=300
    )
    assert _sent(wire)["max_tokens"] == 300


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"temperature": -1}, "temperature=-1"),
        ({"temperature": "hot"}, "temperature='hot'"),
        ({"temperature": True}, "temperature=True"),
        ({"max_tokens": 0}, "max_tokens=0"),
        ({"max_tokens": 1.5}, "max_tokens=1.5"),
        ({"seed": "1"}, "seed='1'"),
    ],
)
def test_bad_values_are_refused_on_runtime_and_exec(options: dict[str, Any], match: str) -> None:
    with pytest.raises(UserError, match=f"Runtime\\({match}"):
        Runtime(OpenAIProvider(model="m"), **options)
    with pytest.raises(UserError, match=f"exec\\({match}"):
        Runtime(OpenAIProvider(model="m")).exec("hi", tools=[], **options)
