"""Request fingerprints: equal requests hash equal, and what differs is said in words."""

from __future__ import annotations

from typing import Any

from openprogram.durable import Requests, explain
from openprogram.messages import AssistantMessage, ToolCall, ToolResultMessage, UserMessage
from openprogram.providers.base import ProviderRequest

SPEC: dict[str, Any] = {
    "name": "add",
    "description": "Add.",
    "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}},
}


def turns(content: str, call_id: str = "call_1", **head: Any) -> list[ProviderRequest]:
    """Two requests of one exec: the first, then after one call and its result."""
    first = (UserMessage(content),)
    reply = AssistantMessage((ToolCall(call_id, "add", {"a": 1}),), stop_reason="tool_calls")
    second = (*first, reply, ToolResultMessage(call_id, "add", "1"))
    options = {"model": "m", "system": None, "tools": (SPEC,), **head}
    return [ProviderRequest(messages=messages, **options) for messages in (first, second)]


def prints(requests: list[ProviderRequest]) -> list[str]:
    fingerprints = Requests()
    return [fingerprints.fingerprint(r).value for r in requests]


def test_the_same_requests_give_the_same_prints_whatever_the_call_ids() -> None:
    assert prints(turns("go")) == prints(turns("go", call_id="toolu_81a"))
    assert prints(turns("go"))[1] != prints(turns("go on"))[1]


def test_hashing_only_what_is_new_equals_hashing_it_all() -> None:
    running = prints(turns("go"))[1]
    whole = Requests().fingerprint(turns("go")[1]).value
    assert running == whole


def test_a_different_head_is_named() -> None:
    old, new = Requests(), Requests()
    recorded = old.fingerprint(turns("go", system="Be brief.")[0])
    current = new.fingerprint(turns("go", system="Be long.")[0])
    text = explain(recorded.head, list(recorded.new), current, new.digests, [])
    assert text == "the system prompt differs"
    other = {"name": "sub", "description": "Subtract.", "parameters": {"type": "object"}}
    current = Requests().fingerprint(turns("go", tools=(SPEC, other))[0])
    text = explain(recorded.head, [], current, [], [])
    assert text == "the tools offered differ (now offered: 'sub')"


def test_a_different_message_is_named_by_its_index() -> None:
    old, new = Requests(), Requests()
    recorded = old.fingerprint(turns("go")[0])
    requests = turns("go on")
    current = new.fingerprint(requests[0])
    text = explain(recorded.head, old.digests, current, new.digests, requests[0].messages)
    assert text == "the request's messages differ at message 0 (a user message, now 'go on')"
