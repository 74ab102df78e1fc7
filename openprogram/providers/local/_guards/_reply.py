"""Read the local model's reply: stream an answer, or hold back and parse calls.

``shaped`` sits between the wire's events and the caller. Text is passed on
as soon as its first visible character shows it is an answer; a reply that
opens calls is held back and becomes ``ToolCall`` blocks at the end, so call
JSON is never streamed as text and a broken call can be asked again cleanly.
On the way it runs the reply's guards (``_pipeline`` guards 12-15, each if the
model's profile runs it): it stops a calls reply at a repeated call, stops an
answer stuck in a loop, reads calls that close an answer in a fence, and
drops calls already made. A reply it cannot use raises ``BrokenReply``.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any

from openprogram.messages import AssistantMessage, TextContent, Usage
from openprogram.providers.base import ProviderEvent, ResponseDone, TextDelta
from openprogram.providers.local._guards._calls import (
    Broken,
    CallScanner,
    ParsedCalls,
    fresh_calls,
    opens_calls,
    read_calls,
    shape_reply,
    trailing_calls,
)
from openprogram.providers.local._guards._loops import LoopWatch, whole_cut
from openprogram.providers.local._guards._picks import Pick, as_pick

if TYPE_CHECKING:
    from openprogram.providers.local._pipeline import LocalRequest

__all__ = ["BrokenReply", "shaped"]

_log = logging.getLogger("openprogram.providers.local")


class BrokenReply(Exception):
    """A reply opened calls but is not a list of calls of offered tools."""

    def __init__(self, why: str, message: AssistantMessage) -> None:
        super().__init__(why)
        self.why = why
        self.message = message


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
    watch = LoopWatch() if _watched(sent) else None
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
            if calls and _stops_early(scanner.feed(held[scanner.consumed :]), seen, sent):
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


def _watched(sent: LocalRequest) -> bool:
    """Whether the reply, if text, is free prose (no JSON asked for) and guard ``loop_stop``
    runs: the loop watch applies."""
    prose = sent.response_format is None and sent.answer_schema is None
    return prose and sent.profile.runs("loop_stop")


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


def _stops_early(
    new: list[tuple[str, dict[str, Any]]],
    seen: list[tuple[str, dict[str, Any]]],
    sent: LocalRequest,
) -> bool:
    """Note the calls ``new`` completes; whether the reply should stop here (guard
    ``repeat_stop``: a call repeats one of the reply, or its first one an old one)."""
    if not sent.profile.runs("repeat_stop"):
        return False
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
    if not sent.profile.runs("drop_repeats"):
        return calls
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
    shown = () if sent.answer_only else sent.tools
    offered = {str(spec.get("name")) for spec in shown} | {p.name for p in picks}
    if message.tool_calls or not (calls or (calls is None and opens_calls(message.text))):
        cut = None
        if _watched(sent) and not message.tool_calls:
            # Streamed, the watch has checked all but the last few characters.
            cut = watch.close() if watch and watch.text else whole_cut(message.text)
        if cut is not None:
            return _looped(message.text, cut, message.usage, sent.model)
        if sent.answer_only and not message.tool_calls:
            return _answer_not_call(message, sent)
        trailing = sent.profile.runs("trailing_calls") and _may_call(sent) and offered
        told = trailing_calls(message.text, offered) if trailing else None
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


def _answer_not_call(message: AssistantMessage, sent: LocalRequest) -> AssistantMessage:
    """A plain answer asked for, checked: a call written as text is never an answer.

    Calls of the request's tools written as the whole reply (a JSON object or
    list, fenced or not) become those calls when any is new; if all were made
    already, the reply is broken (the provider raises: it was the re-ask).
    """
    offered = {str(spec.get("name")) for spec in sent.tools}
    if not offered or not opens_calls(message.text):
        return message
    written = read_calls(message.text, offered)
    if not isinstance(written, ParsedCalls):
        return message
    fresh = fresh_calls(list(written.calls), sent.messages, sent.tools)
    if not fresh:
        raise BrokenReply("asked for an answer, it wrote calls already made as text", message)
    _log.info("the local model wrote a call as its answer; it is read as that call")
    return shape_reply(message, fresh)


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
