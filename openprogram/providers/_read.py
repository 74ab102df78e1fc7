"""Bounded reads: every await on the wire within the deadline, whole bodies within a cap.

A server decides how much it sends; a client must decide how much it reads.
A whole (non-streamed) reply is read up to ``MAX_BODY_BYTES``; an error body
only up to ``READ_CAP`` and the connection is then closed, so a 100 MB error
page costs about 80 KiB per attempt, not 100 MB.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable
from typing import Any, TypeVar

import httpx

from openprogram.exceptions import LLMError
from openprogram.providers._http import Redactor, redact_request
from openprogram.providers._retry import deadline_error

T = TypeVar("T")

__all__ = [
    "MAX_BODY_BYTES",
    "MAX_ERROR_BODY",
    "READ_CAP",
    "guarded",
    "is_json",
    "looks_like_sse",
    "once",
    "read_head",
    "read_whole",
]

MAX_BODY_BYTES = 64 * 1024 * 1024
"""Largest whole (non-streamed) reply body read; a larger one is an ``LLMError``."""
MAX_ERROR_BODY = 64 * 1024
"""What of an error body is classified and quoted."""
READ_CAP = MAX_ERROR_BODY + 16 * 1024
"""What of an error body is read: the cap plus a margin longer than any key, so the head is
scrubbed whole and only then cut to ``MAX_ERROR_BODY`` (no key straddles the cut)."""


def is_json(response: httpx.Response) -> bool:
    kind = str(response.headers.get("content-type", "")).split(";")[0].strip().lower()
    return kind == "application/json" or kind.endswith("+json")


async def read_whole(response: httpx.Response) -> bytes:
    """A whole reply body, at most ``MAX_BODY_BYTES`` (a larger one is an ``LLMError``)."""
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > MAX_BODY_BYTES:
            raise LLMError(
                f"the response body is larger than {MAX_BODY_BYTES:,} bytes, the limit of "
                "one reply",
                reason="server",
                retryable=False,
            )
    return bytes(body)


async def read_head(response: httpx.Response) -> bytes:
    """At most ``READ_CAP`` bytes of a body; the rest is never read (the caller closes)."""
    head = bytearray()
    async for chunk in response.aiter_bytes():
        head += chunk
        if len(head) >= READ_CAP:
            break
    return bytes(head[:READ_CAP])


async def guarded(aw: Awaitable[T], deadline: float | None, what: str, redact: Redactor) -> T:
    """Await ``aw`` within the deadline, turning transport failures into ``LLMError``.

    The httpx exception kept as the cause gets a redacted copy of its request.
    """
    try:
        if deadline is None:
            return await aw
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            _discard(aw)
            raise deadline_error(what)
        async with asyncio.timeout(remaining):
            return await aw
    except TimeoutError:
        raise deadline_error(what) from None
    except httpx.TimeoutException as exc:
        redact_request(exc, redact)
        raise LLMError(
            f"timed out {what}: {type(exc).__name__}", reason="timeout", retryable=True
        ) from exc
    except httpx.TransportError as exc:
        redact_request(exc, redact)
        text = str(exc) or type(exc).__name__
        raise LLMError(
            f"connection failed {what}: {text}", reason="transport", retryable=True
        ) from exc


def _discard(aw: Awaitable[Any]) -> None:
    close = getattr(aw, "close", None)
    if close is not None:
        close()  # a coroutine never awaited would warn "was never awaited"


_SSE_STARTS = (b"data:", b"event:", b"id:", b":")


def looks_like_sse(body: bytes) -> bool:
    """Whether a body sent as JSON is in fact an SSE stream (some servers mislabel it)."""
    return body.lstrip().startswith(_SSE_STARTS)


async def once(body: bytes) -> AsyncIterator[bytes]:
    """``body`` as a one-chunk byte stream."""
    yield body
