"""The normalized request a recording is keyed by, and where two normalized requests differ.

Normalized, a request no longer depends on the wire format, the call ids
(renumbered in order of appearance) or image bytes (kept as their SHA-256);
``request_key`` hashes that form. ``closest_difference`` finds, for a request
that was not recorded, the recorded one it is closest to and where it first
differs, for the ``ReplayMissError`` message.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from openprogram.durable import normal_message
from openprogram.providers.base import ProviderRequest

__all__ = ["closest_difference", "normalize_request", "request_key"]


def normalize_request(request: ProviderRequest) -> dict[str, Any]:
    """The provider-neutral, id-independent form of a request that recordings are keyed by."""
    ids: dict[str, str] = {}

    def call_id(raw: str) -> str:
        return ids.setdefault(raw, f"call_{len(ids) + 1}")

    fmt = request.response_format
    return {
        "model": request.model,
        "system": request.system,
        "messages": [normal_message(m, call_id) for m in request.messages],
        "tools": [
            {
                "name": t.get("name"),
                "description": t.get("description"),
                "parameters": t.get("parameters"),
            }
            for t in request.tools
        ],
        "tool_choice": request.tool_choice
        if isinstance(request.tool_choice, str)
        else dict(request.tool_choice),
        "parallel_tool_calls": request.parallel_tool_calls,
        "response_format": None
        if fmt is None
        else {"name": fmt.name, "schema": dict(fmt.schema), "strict": fmt.strict},
        # Sampling options only when set, so recordings made before they existed still match.
        **{
            name: getattr(request, name)
            for name in ("temperature", "max_tokens", "seed")
            if getattr(request, name) is not None
        },
    }


def request_key(normalized: Mapping[str, Any]) -> str:
    """The SHA-256 of a normalized request's canonical JSON: what recorded turns are found by."""
    canonical = json.dumps(normalized, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def closest_difference(
    normalized: Mapping[str, Any], recorded: Sequence[Mapping[str, Any]]
) -> tuple[str, Any, Any]:
    """Where ``normalized`` first differs from the closest of the ``recorded`` requests.

    Returns:
        The path of the first difference (e.g. ``"request.messages[2].content"``),
        the recorded value there, and the value ``normalized`` has.
    """
    closest = max(recorded, key=lambda request: _common_prefix(normalized, request))
    return _difference(closest, normalized)


def _common_prefix(a: Any, b: Any) -> int:
    """How many leading messages two normalized requests share (for the closest match)."""
    same = 0
    for left, right in zip(a["messages"], b["messages"], strict=False):
        if left != right:
            break
        same += 1
    return same * 2 + int(a["tools"] == b["tools"]) + int(a["system"] == b["system"])


def _difference(recorded: Any, got: Any, where: str = "request") -> tuple[str, Any, Any]:
    if isinstance(recorded, dict) and isinstance(got, dict):
        for key in [*recorded, *(k for k in got if k not in recorded)]:
            if recorded.get(key) != got.get(key):
                return _difference(recorded.get(key), got.get(key), f"{where}.{key}")
    if isinstance(recorded, list) and isinstance(got, list):
        for index, (left, right) in enumerate(zip(recorded, got, strict=False)):
            if left != right:
                return _difference(left, right, f"{where}[{index}]")
        if len(recorded) != len(got):
            return f"{where} (length)", len(recorded), len(got)
    return where, recorded, got
