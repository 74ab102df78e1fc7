"""Shared HTTP plumbing: timeouts, owned clients, error classification, redaction.

Owned clients live one per event loop. Sync ``Runtime.exec`` runs each call
on a fresh loop (``asyncio.run``), and nested sync agentic functions run their
own loops in worker threads, while an ``httpx.AsyncClient`` and its pooled
sockets belong to the loop that opened them. So the provider keeps one client
per running loop and closes it when that loop shuts down (see ``LoopClients``).
"""

from __future__ import annotations

import asyncio
import email.utils
import functools
import re
import ssl
import threading
import time
import weakref
from collections.abc import AsyncGenerator, Iterable, Mapping

import httpx

from openprogram.exceptions import LLMError, LLMErrorReason
from openprogram.providers._json import loads

__all__ = [
    "DEFAULT_TIMEOUT",
    "SENSITIVE_HEADERS",
    "LoopClients",
    "Masked",
    "Redactor",
    "error_fields",
    "event_error",
    "is_context_length",
    "masked_headers",
    "redact_request",
    "retry_after_s",
    "status_error",
    "to_timeout",
]

DEFAULT_TIMEOUT = httpx.Timeout(600.0, connect=10.0)
"""Connect within 10 s; any single read, write or pool wait within 600 s (long generations)."""

_CONTEXT_PATTERNS = re.compile(
    r"context.length|context window|maximum context|prompt is too long|too many (input )?tokens"
    r"|input is too long|exceeds the maximum (number of )?tokens|input token count"
    r"|maximum prompt length|reduce the length",
    re.IGNORECASE,
)


def to_timeout(timeout: float | httpx.Timeout | None) -> httpx.Timeout:
    """``timeout=`` as given to a provider: seconds (read) or an ``httpx.Timeout``."""
    if timeout is None:
        return DEFAULT_TIMEOUT
    if isinstance(timeout, httpx.Timeout):
        return timeout
    return httpx.Timeout(float(timeout), connect=min(float(timeout), 10.0))


class Redactor:
    """Replaces secrets (API keys, tokens) in text that may reach an error message.

    Always scrub a whole text before cutting it (``cut``): a key that straddles
    the cut would otherwise survive in part, no longer matching the whole key.
    """

    def __init__(self, secrets: Iterable[str | None]) -> None:
        self._secrets = sorted({s for s in secrets if s and len(s) >= 4}, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text

    def cut(self, text: str, limit: int) -> str:
        """``text`` scrubbed, then cut to ``limit`` characters."""
        return self(text)[:limit]

    def scrub_bytes(self, data: bytes) -> bytes:
        """``data`` (UTF-8, as far as it decodes) with every secret replaced."""
        if not self._secrets:
            return data
        return self(data.decode("utf-8", errors="replace")).encode()


SENSITIVE_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "api-key",
        "x-goog-api-key",
        "x-amz-security-token",
        "cookie",
    }
)
"""Headers whose values are credentials, whatever they hold."""


class Masked(str):
    """A header value that shows as ``'***'`` in reprs (dicts of headers in traceback locals)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "'***'"


def masked_headers(headers: Mapping[str, str], secret: Iterable[str]) -> dict[str, str]:
    """``headers`` with credential values wrapped in ``Masked`` (still sent as they are).

    Args:
        headers: The headers to send.
        secret: Further header names to mask (e.g. a provider's auth headers).
    """
    names = SENSITIVE_HEADERS | {name.lower() for name in secret}
    return {k: Masked(v) if k.lower() in names else v for k, v in headers.items()}


def redact_request(exc: httpx.RequestError, redact: Redactor) -> None:
    """Give ``exc`` a copy of its request without credentials and without the body.

    httpx keeps the request it failed on (``exc.request``), headers included,
    and users log or inspect these exceptions. The copy keeps the method and
    URL; credential headers read ``***``; the body (the conversation) is dropped.
    """
    try:
        original = exc.request
    except RuntimeError:
        return  # raised outside a request: nothing is attached
    headers = {
        name: "***" if name.lower() in SENSITIVE_HEADERS or redact(value) != value else value
        for name, value in original.headers.items()
    }
    url = httpx.URL(redact(str(original.url)))
    exc.request = httpx.Request(original.method, url, headers=headers)


def retry_after_s(headers: httpx.Headers) -> float | None:
    """The server's requested wait: ``retry-after-ms``, else ``Retry-After`` (seconds or date)."""
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            return max(0.0, float(raw_ms) / 1000.0)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None  # neither seconds nor an HTTP date: ignore the hint, back off instead
    return max(0.0, when.timestamp() - time.time())


def error_fields(body: bytes) -> tuple[str, str | None]:
    """``(message, code)`` from an error body in the common JSON shapes, else its text.

    Shapes: ``{"error": {"message", "type"/"code"/"status"}}`` (OpenAI,
    Anthropic, Gemini), ``{"error": "text"}``, ``{"message": ...}`` (Bedrock,
    vLLM), ``{"detail": ...}``.
    """
    text = body.decode("utf-8", errors="replace").strip()
    try:
        data = loads(text)
    except ValueError:
        return text[:2000] or "(empty body)", None
    if not isinstance(data, dict):
        return text[:2000], None
    err = data.get("error", data)
    if isinstance(err, str):
        return err, None
    if not isinstance(err, dict):
        return text[:2000], None
    message = err.get("message") or err.get("Message") or err.get("detail") or text[:2000]
    code = err.get("code") if isinstance(err.get("code"), str) else None
    code = code or err.get("type") or err.get("status") or data.get("type")
    return str(message), (str(code) if code else None)


def status_error(
    status: int,
    message: str,
    *,
    code: str | None = None,
    retry_after: float | None = None,
) -> LLMError:
    """Classify an HTTP error status (plus the provider's code and message) into an ``LLMError``."""
    reason: LLMErrorReason
    retryable = False
    lowered = (code or "").lower()
    if status in (401, 403):
        reason = "auth"
    elif status == 408:
        reason, retryable = "timeout", True
    elif status == 429:
        # OpenAI's "insufficient_quota" is a billing state, not a burst: waiting does not help.
        reason, retryable = "rate_limit", "quota" not in lowered
    elif status == 409 or status >= 500:
        reason, retryable = "server", True
    elif "content_filter" in lowered or "content_policy" in lowered:
        reason = "content_filter"
    elif "context_length" in lowered or _CONTEXT_PATTERNS.search(message):
        reason = "context_length"
    else:
        reason = "invalid_request"
    return LLMError(
        message,
        reason=reason,
        retryable=retryable,
        http_status=status,
        retry_after_s=retry_after,
        provider_message=message,
    )


def is_context_length(message: str) -> bool:
    """Whether a provider's message says the prompt does not fit the context window."""
    return _CONTEXT_PATTERNS.search(message) is not None


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    # Built once, on first use, and shared: loading the CA bundle costs ~30 ms, and a
    # sync exec makes a client per event loop.
    return httpx.create_ssl_context()


class LoopClients:
    """One owned ``httpx.AsyncClient`` per running event loop, closed when that loop shuts down.

    ``asyncio.run`` (and ``asyncio.Runner``) call ``loop.shutdown_asyncgens()``
    before closing a loop, which ``aclose()``s every async generator the loop
    saw start. A small keeper generator per loop holds the client and closes
    it in its ``finally``: the pooled sockets are released on their own loop,
    with no leak and no ``ResourceWarning``.
    """

    def __init__(self, timeout: httpx.Timeout) -> None:
        self._timeout = timeout
        self._lock = threading.Lock()
        self._clients: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, tuple[httpx.AsyncClient, AsyncGenerator[None, None]]
        ] = weakref.WeakKeyDictionary()

    async def get(self) -> httpx.AsyncClient:
        """The client of the running loop, created on first use."""
        loop = asyncio.get_running_loop()
        with self._lock:
            entry = self._clients.get(loop)
        if entry is not None:
            return entry[0]
        client = httpx.AsyncClient(timeout=self._timeout, verify=_ssl_context())
        keeper = self._keeper(client)
        await anext(keeper)  # registers the generator with this loop's shutdown hook
        with self._lock:
            self._clients[loop] = (client, keeper)
        return client

    async def _keeper(self, client: httpx.AsyncClient) -> AsyncGenerator[None, None]:
        # Holds no reference to the loop, so the weak key can die with it.
        try:
            yield
        finally:
            with self._lock:
                for loop, (owned, _) in list(self._clients.items()):
                    if owned is client:
                        del self._clients[loop]
            await client.aclose()

    async def aclose(self) -> None:
        """Close the running loop's client now (the others close with their loops)."""
        loop = asyncio.get_running_loop()
        with self._lock:
            entry = self._clients.get(loop)
        if entry is not None:
            await entry[1].aclose()


def event_error(message: str, code: str | None) -> LLMError:
    """Classify an error reported inside a stream (no HTTP status) by its code and text."""
    lowered = (code or "").lower()
    reason: LLMErrorReason
    retryable = False
    if "rate_limit" in lowered or "throttl" in lowered or "resource_exhausted" in lowered:
        reason, retryable = "rate_limit", True
    elif any(k in lowered for k in ("overload", "server", "api_error", "internal", "unavailable")):
        reason, retryable = "server", True
    elif "context_length" in lowered or is_context_length(message):
        reason = "context_length"
    elif "content_filter" in lowered or "content_policy" in lowered:
        reason = "content_filter"
    elif "auth" in lowered or "permission" in lowered or "access" in lowered:
        reason = "auth"
    elif "invalid" in lowered or "validation" in lowered:
        reason = "invalid_request"
    else:
        reason = "server"
    return LLMError(message, reason=reason, retryable=retryable, provider_message=message)
