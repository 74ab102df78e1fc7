"""Attribute names and values of the GenAI semantic conventions, and small helpers."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = [
    "PROVIDER_NAMES",
    "SEMCONV_VERSION",
    "as_json",
    "messages",
    "ns",
    "provider_attributes",
]

SEMCONV_VERSION = "1.37.0"
"""The GenAI semantic-conventions version the span names and attributes follow."""

PROVIDER_NAMES: Mapping[str, str] = {
    "openai": "openai",
    "openai-responses": "openai",
    "anthropic": "anthropic",
    "gemini": "gcp.gemini",
    "bedrock": "aws.bedrock",
}
"""openprogram provider ids → well-known ``gen_ai.provider.name`` values (others pass as is)."""


def ns(at: float) -> int:
    """An event's ``time.time()`` as the nanoseconds OpenTelemetry timestamps use."""
    return int(at * 1e9)


def provider_attributes(provider_id: str, model: str | None) -> dict[str, Any]:
    """``gen_ai.provider.name`` (and its predecessor ``gen_ai.system``) and the model."""
    name = PROVIDER_NAMES.get(provider_id, provider_id)
    attributes: dict[str, Any] = {
        "gen_ai.provider.name": name,
        # Deprecated by gen_ai.provider.name in 1.37; backends built on <= 1.36 still read it.
        "gen_ai.system": name,
        "openprogram.provider_id": provider_id,
    }
    if model:
        attributes["gen_ai.request.model"] = model
    return attributes


def messages(role: str, text: str) -> str:
    """A one-message ``gen_ai.input.messages``/``gen_ai.output.messages`` value, as JSON text."""
    message: dict[str, Any] = {"role": role, "parts": [{"type": "text", "content": text}]}
    if role == "assistant":
        message["finish_reason"] = "stop"
    return json.dumps([message], ensure_ascii=False)


def as_json(value: Any) -> str:
    """``value`` as JSON text for a string attribute (keys sorted, unknown objects by ``str``)."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
