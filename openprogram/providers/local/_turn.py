"""One turn of the local model: stream an answer, or hold back and parse calls; re-ask a broken one.

``shaped`` sits between the wire's events and the caller. Text is passed on
as soon as its first visible character shows it is an answer; a reply that
opens calls is held back and becomes ``ToolCall`` blocks at the end, so call
JSON is never streamed as text and a broken call can be asked again cleanly.
``reask`` says how: a reply cut at the output limit is asked again with a
larger limit; any other broken reply is asked again for a plain answer.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import fields, replace

import httpx

from openprogram.messages import AssistantMessage
from openprogram.providers.base import ProviderEvent, ProviderRequest, ResponseDone, TextDelta
from openprogram.providers.local._calls import (
    Broken,
    fresh_calls,
    opens_calls,
    read_calls,
    shape_reply,
)
from openprogram.providers.local._chat import LocalRequest
from openprogram.providers.local._server import LOCAL_MODEL

__all__ = ["BrokenReply", "local_request", "reask", "served_model", "shaped"]

_CUT_GROWTH = 4
"""A call cut at the output limit is asked again with this many times the limit."""


class BrokenReply(Exception):
    """A reply opened calls but is not a list of calls of offered tools."""

    def __init__(self, why: str, message: AssistantMessage) -> None:
        super().__init__(why)
        self.why = why
        self.message = message


def local_request(request: ProviderRequest) -> LocalRequest:
    """``request`` as a ``LocalRequest`` for the embedded model."""
    values = {f.name: getattr(request, f.name) for f in fields(ProviderRequest)}
    return LocalRequest(**{**values, "model": LOCAL_MODEL})


def reask(broken: BrokenReply, sent: LocalRequest, limit: int | None) -> LocalRequest | None:
    """The request to send instead of one whose reply broke, or ``None`` to give up."""
    cut = broken.message.stop_reason == "length"
    if cut and limit is not None and sent.min_max_tokens is None:
        return replace(sent, min_max_tokens=limit * _CUT_GROWTH)
    if sent.answer_only or sent.tool_choice != "auto":
        return None  # a forced call cannot become an answer
    return replace(sent, answer_only=True)


async def shaped(
    events: AsyncIterator[ProviderEvent], sent: LocalRequest
) -> AsyncIterator[ProviderEvent]:
    """The wire's events, with a calls reply turned into ``ToolCall`` blocks (module docstring).

    Raises:
        BrokenReply: The reply opened calls but they could not be read.
    """
    held = ""
    calls: bool | None = None if sent.tools and not sent.answer_only else False
    async for event in events:
        if isinstance(event, TextDelta) and calls is None:
            held += event.text
            calls = opens_calls(held)
            if calls is False:
                yield TextDelta(held)
        elif isinstance(event, TextDelta) and calls:
            continue  # held back: the whole reply is parsed at the end
        elif isinstance(event, ResponseDone):
            yield ResponseDone(_final(event.message, sent, calls))
        else:
            yield event


def _final(message: AssistantMessage, sent: LocalRequest, calls: bool | None) -> AssistantMessage:
    if message.tool_calls or not (calls or (calls is None and opens_calls(message.text))):
        return message
    parsed = read_calls(message.text, {str(spec.get("name")) for spec in sent.tools})
    if isinstance(parsed, Broken):
        cut = " (cut at the output limit)" if message.stop_reason == "length" else ""
        raise BrokenReply(parsed.why + cut, message)
    fresh = fresh_calls(parsed.calls, sent.messages, sent.tools)
    if not fresh:
        raise BrokenReply("it repeats calls already made instead of answering", message)
    return shape_reply(message, fresh)


def served_model(base_url: str) -> str | None:
    """The id of the model a llama.cpp server runs (``GET /v1/models``), if it says."""
    try:
        data = httpx.get(f"{base_url}/models", timeout=10.0).json()
        return str(data["data"][0]["id"])
    except (httpx.HTTPError, ValueError, KeyError, IndexError, TypeError):
        return None  # any failure: the caller falls back to the embedded model's name
