"""A streamed reply: bytes to wire events to provider events, and what an early end means.

A ``Decoder`` splits the response bytes into wire events (``_sse``,
``_eventstream``); the wire's ``StreamParser`` turns each into provider events
and collects the reply. ``read_stream`` drives the two until the wire's
end-of-reply marker. A stream that stops early fails as retryable while
nothing has reached the caller; once something has, the reply ends cut off,
saying why (a tool call in a cut-off reply is never executed).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any, Protocol

from openprogram.exceptions import LLMError
from openprogram.messages import AssistantMessage
from openprogram.providers._http import Redactor
from openprogram.providers._read import guarded
from openprogram.providers._reply import ReplyBuilder
from openprogram.providers.base import (
    ProviderEvent,
    ResponseDone,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
)

__all__ = ["Decoder", "StreamParser", "read_stream"]

_CONTENT = (TextDelta, ThinkingDelta, ToolCallDelta)


class Decoder(Protocol):
    """Splits a response byte stream into wire events (SSE or AWS event stream)."""

    def feed(self, chunk: bytes) -> list[Any]: ...

    def close(self) -> list[Any]: ...


class StreamParser:
    """Turns wire events into provider events, collecting the reply in ``builder``."""

    def __init__(self) -> None:
        self.builder = ReplyBuilder()
        self.done = False
        """Set when the wire's end-of-reply marker arrived (no need to read further)."""

    def feed(self, event: Any) -> list[ProviderEvent]:
        """Handle one wire event; return the events to pass on."""
        raise NotImplementedError

    def finish(self, cut_reason: str | None) -> AssistantMessage:
        """The final message; ``cut_reason`` says why reading stopped early, if it did."""
        return self.builder.build(cut_reason=cut_reason)


async def read_stream(
    chunks: AsyncIterator[bytes],
    decoder: Decoder,
    parser: StreamParser,
    *,
    deadline: float | None,
    redact: Redactor,
    done: Callable[[AssistantMessage], AssistantMessage],
) -> AsyncGenerator[ProviderEvent, None]:
    """Pass on the parser's events, then ``ResponseDone`` with the reply ``done`` returns.

    Args:
        chunks: The response body as it arrives.
        decoder: The wire's framing.
        parser: The wire's stream parser (a fresh one).
        deadline: ``time.monotonic()`` by which every read must be done.
        redact: Scrubs secrets from the text of a transport failure.
        done: The provider's last touch on the reply (finalized and stamped).

    Raises:
        LLMError: The stream failed or ended before any content arrived
            (retryable), or the deadline passed.
    """
    delivered = False
    cut: str | None = None
    while not parser.done:
        try:
            chunk = await guarded(anext(chunks), deadline, "while streaming the reply", redact)
        except StopAsyncIteration:
            cut = "the response stream ended before the reply was complete"
            for event in decoder.close():  # e.g. SSE without a final blank line
                for out in parser.feed(event):
                    yield out
            break
        except LLMError as err:
            if not delivered or (err.reason == "timeout" and not err.retryable):
                raise  # nothing passed on yet (retryable), or the deadline: both final here
            cut = f"the response stream broke: {err.message}"
            break
        for wire_event in _decode(decoder, chunk):
            for out in parser.feed(wire_event):
                delivered = delivered or isinstance(out, _CONTENT)
                yield out
            if parser.done:
                break
    message = done(parser.finish(None if parser.done else cut))
    if message.stop_reason == "error" and not delivered and not parser.done:
        raise LLMError(
            "the response stream ended before any content arrived",
            reason="transport",
            retryable=True,
        )
    yield ResponseDone(message)


def _decode(decoder: Decoder, chunk: bytes) -> list[Any]:
    try:
        return decoder.feed(chunk)
    except ValueError as exc:  # EventStreamError: corrupt framing, nothing more is readable
        raise LLMError(f"the response stream is corrupt: {exc}", reason="server") from None
