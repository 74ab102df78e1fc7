"""One turn of the local model: stream an answer, or hold back and parse calls; re-ask a broken one.

``shaped`` sits between the wire's events and the caller. Text is passed on
as soon as its first visible character shows it is an answer; a reply that
opens calls is held back and becomes ``ToolCall`` blocks at the end, so call
JSON is never streamed as text and a broken call can be asked again cleanly.
An answer that ends with its calls in a fenced JSON list keeps its text and
gets those calls (``trailing_calls``).
``reask`` says how: a reply cut at the output limit is asked again with a
larger limit; any other broken reply is asked again for a plain answer.
``prompt_measure`` and ``measured`` count the prompt of a reply stopped early
by a server that sent no token counts, with a one-token side request.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from dataclasses import fields, replace
from typing import Any

import httpx

from openprogram.messages import AssistantMessage, TextContent, Usage
from openprogram.providers.base import (
    ProviderEvent,
    ProviderRequest,
    RequestSent,
    ResponseDone,
    RetryScheduled,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
)
from openprogram.providers.local._calls import (
    Broken,
    CallScanner,
    fresh_calls,
    opens_calls,
    read_calls,
    shape_reply,
    trailing_calls,
)
from openprogram.providers.local._chat import (
    LocalRequest,
    LocalWire,
    SideCall,
    request_picks,
    shown_tools,
)
from openprogram.providers.local._loops import LoopWatch, whole_cut
from openprogram.providers.local._meter import Meter
from openprogram.providers.local._picks import Pick, as_pick

_log = logging.getLogger("openprogram.providers.local")

__all__ = [
    "Attempts",
    "BrokenReply",
    "local_request",
    "measured",
    "prompt_measure",
    "reask",
    "served_model",
    "shaped",
]

_CONTENT = (TextDelta, ThinkingDelta, ToolCallDelta)
_CUT_GROWTH = 4
"""A call cut at the output limit is asked again with this many times the limit."""


class BrokenReply(Exception):
    """A reply opened calls but is not a list of calls of offered tools."""

    def __init__(self, why: str, message: AssistantMessage) -> None:
        super().__init__(why)
        self.why = why
        self.message = message


class Attempts:
    """Counts requests across the provider's own re-asks and notes delivered content."""

    def __init__(self) -> None:
        self.sent = 0
        self.delivered = False
        self.restart = False

    async def run(
        self, wire: LocalWire, request: ProviderRequest
    ) -> AsyncGenerator[ProviderEvent, None]:
        events = wire.stream(request)  # an async generator, though typed as an iterator
        try:
            async for event in events:
                if isinstance(event, RequestSent):
                    self.sent += 1
                    yield RequestSent(attempt=self.sent, prompt_size_bytes=event.prompt_size_bytes)
                elif isinstance(event, RetryScheduled):
                    yield RetryScheduled(
                        attempt=self.sent, delay_s=event.delay_s, error=event.error
                    )
                else:
                    self.delivered = self.delivered or isinstance(event, _CONTENT)
                    yield event
        finally:
            close = getattr(events, "aclose", None)
            if close is not None:  # end the wire's stream (and its HTTP response) promptly
                await close()


def local_request(request: ProviderRequest, model: str) -> LocalRequest:
    """``request`` as a ``LocalRequest`` for the embedded model ``model``."""
    values = {f.name: getattr(request, f.name) for f in fields(ProviderRequest)}
    sent = LocalRequest(**{**values, "model": model}, meter=Meter())
    return replace(sent, picks=request_picks(sent))


def reask(broken: BrokenReply, sent: LocalRequest, limit: int | None) -> LocalRequest | None:
    """The request to send instead of one whose reply broke, or ``None`` to give up."""
    cut = broken.message.stop_reason == "length"
    if cut and limit is not None and sent.min_max_tokens is None:
        return replace(sent, min_max_tokens=limit * _CUT_GROWTH)
    if sent.answer_only or sent.tool_choice != "auto":
        return None  # a forced call cannot become an answer
    # Leaving only the functions it did not repeat was measured worse: with a weather
    # result in, the 0.5B then called `add(21, 10)` instead of answering. In a decision
    # the re-ask allows a pick only: its options as functions once a result is in
    # (``_picks``), so it can still pick `refund`; before that, the pick written as text.
    return replace(sent, answer_only=True)


async def shaped(
    events: AsyncIterator[ProviderEvent], sent: LocalRequest
) -> AsyncGenerator[ProviderEvent, None]:
    """The wire's events, with a calls reply turned into ``ToolCall`` blocks (module docstring).

    A streamed calls reply ends early, when its first call repeats one already
    answered or a call repeats one of the same reply (a greedy loop).

    Raises:
        BrokenReply: The reply opened calls but they could not be read, or repeat old ones.
    """
    held = ""
    picks = sent.picks
    calls: bool | None = None if picks or _may_call(sent) else False
    scanner, seen = CallScanner(), list[tuple[str, dict[str, Any]]]()
    watch = LoopWatch() if _prose(sent) else None
    async for event in events:
        if isinstance(event, ResponseDone):
            final = _final(event.message, sent, calls, picks, watch)
            if calls and held and not final.tool_calls:
                yield TextDelta(final.text)  # a pick, or it began like a call but is JSON text
            yield ResponseDone(final)
        elif not isinstance(event, TextDelta) or calls is False:
            yield event
            cut = watch.feed(event.text) if watch and isinstance(event, TextDelta) else None
            if cut is not None:
                text = watch.text if watch else ""
                yield ResponseDone(_looped(text, cut, await _spent(events, sent), sent.model))
                return  # closing the stream stops the server's generation too
        else:
            held += event.text
            if calls is None:
                calls = opens_calls(held)
                if calls is False:
                    yield TextDelta(held)
                    if watch:
                        watch.feed(held)
                    continue
            if calls and _loops(scanner.feed(held[scanner.consumed :]), seen, sent):
                cost = await _spent(events, sent)
                stopped = AssistantMessage((), usage=cost, model=sent.model)
                message = _settled(seen, sent, picks, stopped)
                if not message.tool_calls:
                    yield TextDelta(message.text)
                yield ResponseDone(message)
                return


def _may_call(sent: LocalRequest) -> bool:
    """Whether the reply may call a tool (a decision's picks aside)."""
    return bool(sent.tools) and not sent.answer_only and sent.response_format is None


def _prose(sent: LocalRequest) -> bool:
    """Whether the reply, if text, is free prose (no JSON asked for): the loop watch applies."""
    return sent.response_format is None and sent.answer_schema is None


async def _spent(events: AsyncIterator[ProviderEvent], sent: LocalRequest) -> Usage:
    """What the reply has cost, now that the provider stops reading it (``_meter``)."""
    meter = sent.meter
    if meter is not None and meter.live:
        return meter.so_far()  # streamed: reading on would let the server generate on
    async for event in events:  # not streamed: the reply is in whole, its usage follows
        if isinstance(event, ResponseDone):
            return event.message.usage
    return Usage()


def _looped(text: str, cut: int, usage: Usage, model: str | None) -> AssistantMessage:
    """The reply of an answer stopped in a loop: its text up to the loop's first copy."""
    _log.info("the local model's answer repeated one passage; stopped it after %d characters", cut)
    kept = TextContent(text[:cut].rstrip())
    return AssistantMessage((kept,), stop_reason="length", usage=usage, model=model)


def _loops(
    new: list[tuple[str, dict[str, Any]]],
    seen: list[tuple[str, dict[str, Any]]],
    sent: LocalRequest,
) -> bool:
    """Note the calls ``new`` completes; whether the reply should stop here."""
    for call in new:
        if call in seen:
            return True
        if not seen and not fresh_calls([call], sent.messages, sent.tools):
            seen.append(call)
            return True
        seen.append(call)
    return False


def _checked(
    calls: list[tuple[str, dict[str, Any]]], sent: LocalRequest, message: AssistantMessage
) -> list[tuple[str, dict[str, Any]]]:
    fresh = fresh_calls(calls, sent.messages, sent.tools)
    if not fresh:
        raise BrokenReply("it repeats calls already made instead of answering", message)
    return fresh


def _final(
    message: AssistantMessage,
    sent: LocalRequest,
    calls: bool | None,
    picks: Sequence[Pick],
    watch: LoopWatch | None,
) -> AssistantMessage:
    offered = {str(spec.get("name")) for spec in shown_tools(sent)} | {p.name for p in picks}
    if message.tool_calls or not (calls or (calls is None and opens_calls(message.text))):
        cut = None
        if _prose(sent) and not message.tool_calls:
            # Streamed, the watch has checked all but the last few characters.
            cut = watch.close() if watch and watch.text else whole_cut(message.text)
        if cut is not None:
            return _looped(message.text, cut, message.usage, sent.model)
        told = trailing_calls(message.text, offered) if _may_call(sent) and offered else None
        if told is None:
            return message
        prose, found = told
        return _settled(list(found.calls), sent, picks, message, prose)
    parsed = read_calls(message.text, offered)
    if parsed is None:
        return message
    if isinstance(parsed, Broken):
        note = " (cut at the output limit)" if message.stop_reason == "length" else ""
        raise BrokenReply(parsed.why + note, message)
    return _settled(list(parsed.calls), sent, picks, message)


def _settled(
    calls: list[tuple[str, dict[str, Any]]],
    sent: LocalRequest,
    picks: Sequence[Pick],
    message: AssistantMessage,
    prose: str = "",
) -> AssistantMessage:
    """The reply for ``calls``: a pick's text answer, or its fresh tool calls (after ``prose``,
    the text a reply wrote before its calls, already streamed)."""
    answer, real = as_pick(message, calls, picks)
    if answer is not None:
        return answer
    return shape_reply(message, _checked(real, sent, message), prose)


def prompt_measure(sent: LocalRequest, wire: LocalWire) -> SideCall | None:
    """The request measuring the prompt of a reply stopped early with no figures, if one was."""
    meter = sent.meter
    if meter is None or not meter.prompt_unknown:
        return None
    meter.prompt_unknown = False
    return wire.prompt_measure(sent)


async def measured(usage: Usage, measure: SideCall | None, wire: LocalWire) -> Usage:
    """``usage``, plus the prompt ``measure`` measured (if there is one)."""
    if measure is None:
        return usage
    prompt = await wire.prompt_usage(measure)
    if prompt is None:
        _log.warning(
            "the local server sent no token counts for a reply stopped early, and measuring "
            "its prompt failed: its prompt tokens are unknown and counted as 0"
        )
        return usage
    return usage + prompt


def served_model(base_url: str) -> str | None:
    """The id of the model a llama.cpp server runs (``GET /v1/models``), if it says."""
    try:
        data = httpx.get(f"{base_url}/models", timeout=10.0).json()
        return str(data["data"][0]["id"])
    except (httpx.HTTPError, ValueError, KeyError, IndexError, TypeError):
        return None  # any failure: the caller falls back to the embedded model's name
