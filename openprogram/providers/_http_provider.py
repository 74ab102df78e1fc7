"""What every HTTP provider shares: configuration, one attempt over httpx, the retry loop.

A wire module subclasses ``HttpProvider`` and fills in five hooks: the URL,
the auth headers, the request body, the parse of a whole response, and a
``StreamParser`` for the streamed one. Everything else — deadline handling,
error classification, retries, cut-off streams, client ownership — lives
here once, with its parts beside it: ``_streaming`` reads a streamed reply,
``_retry`` owns the retries, ``_read`` bounds every read, ``_error_text``
hints and scrubs what a failure says.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Mapping
from dataclasses import replace
from typing import Any, ClassVar, TypedDict, TypeVar

import httpx

from openprogram.exceptions import ConfigurationError, LLMError
from openprogram.messages import AssistantMessage
from openprogram.providers._allow import check_model_request
from openprogram.providers._error_text import hinted, scrubbed
from openprogram.providers._history import sendable, stamped
from openprogram.providers._http import (
    LoopClients,
    Redactor,
    error_fields,
    masked_headers,
    retry_after_s,
    status_error,
    to_timeout,
)
from openprogram.providers._read import (
    MAX_ERROR_BODY,
    guarded,
    is_json,
    looks_like_sse,
    once,
    read_head,
    read_whole,
)
from openprogram.providers._retry import EXEC_HINT as _EXEC_HINT
from openprogram.providers._retry import Backoff, with_retries
from openprogram.providers._streaming import Decoder, StreamParser, read_stream
from openprogram.providers._wire import load_json, merged_body, message_events, set_message
from openprogram.providers.base import ProviderEvent, ProviderRequest, ResponseDone

__all__ = ["DEFAULT_TOTAL_TIMEOUT_S", "Decoder", "HttpProvider", "StreamParser"]

DEFAULT_TOTAL_TIMEOUT_S = 900.0
"""A call (all attempts) ends within 15 minutes when the exec sets no ``timeout_s``: the read
timeout alone restarts with every byte, so a server trickling bytes could hold it forever."""


T = TypeVar("T")


class HttpOptions(TypedDict, total=False):
    """Constructor options every HTTP provider takes (declared once, here)."""

    model: str | None
    """Default model id; ``Runtime(model=...)`` and ``exec(model=...)`` override it."""
    api_key: str | None
    """API key; default: the provider's environment variable."""
    base_url: str | None
    """Endpoint root, following the vendor SDK's convention (see each provider)."""
    client: httpx.AsyncClient | None
    """An ``httpx.AsyncClient`` to use (never closed by the provider)."""
    stream: bool
    """Use the streaming endpoint (default ``True``)."""
    max_retries: int
    """Retries of retryable failures (default 4)."""
    timeout: float | httpx.Timeout | None
    """Seconds per read (connect capped at 10 s), or an ``httpx.Timeout``."""
    total_timeout_s: float | None
    """Seconds one call may take in all, retries included (default 900); the exec's
    ``timeout_s`` still wins when it ends sooner. ``None``: no limit of the provider's own."""
    backoff_base_s: float
    """First retry's maximum delay; doubles per retry (full jitter)."""
    backoff_max_s: float
    """Cap of the retry delay."""
    extra_body: Mapping[str, Any] | None
    """Extra request fields laid over the body (nested objects merge)."""
    extra_headers: Mapping[str, str] | None
    """Extra HTTP headers."""
    name: str | None
    """Provider id in events and errors."""


class HttpProvider:
    """Base of the HTTP providers (see the subclasses for the wire details)."""

    default_name: ClassVar[str] = ""
    default_base_url: ClassVar[str] = ""
    base_url_env: ClassVar[str | None] = None
    """Environment variable read for ``base_url`` when none is given."""
    key_env: ClassVar[str | None] = None
    """Environment variable holding the API key."""
    supports_structured_output: ClassVar[bool] = False

    def __init__(
        self,
        *,
        model: str | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        client: httpx.AsyncClient | None = None,
        stream: bool = True,
        max_retries: int = 4,
        timeout: float | httpx.Timeout | None = None,
        total_timeout_s: float | None = DEFAULT_TOTAL_TIMEOUT_S,
        backoff_base_s: float = 0.5,
        backoff_max_s: float = 20.0,
        extra_body: Mapping[str, Any] | None = None,
        extra_headers: Mapping[str, str] | None = None,
        name: str | None = None,
    ) -> None:
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}")
        if total_timeout_s is not None and not total_timeout_s > 0:
            raise ValueError(
                f"total_timeout_s must be > 0 seconds (or None for no limit), got {total_timeout_s}"
            )
        self._total_timeout_s = total_timeout_s
        self._model = model
        self._api_key = api_key
        env_url = os.environ.get(self.base_url_env) if self.base_url_env else None
        self._base_url = (base_url or env_url or self.default_base_url).rstrip("/")
        self._client = client
        self._stream = stream
        self._max_retries = max_retries
        self._timeout = to_timeout(timeout) if timeout is not None else None
        self._backoff = Backoff(backoff_base_s, backoff_max_s)
        self._extra_body = dict(extra_body or {})
        self._extra_headers = dict(extra_headers or {})
        self._name = name or self.default_name
        self._key_env = self.key_env
        self._clients = LoopClients(to_timeout(timeout))

    # -- public surface ------------------------------------------------------------------

    @property
    def name(self) -> str:
        """Provider id for events and errors, e.g. ``"openai"``."""
        return self._name

    @property
    def model(self) -> str | None:
        """The default model id."""
        return self._model

    @property
    def total_timeout_s(self) -> float | None:
        """Seconds one call may take in all when the exec gives no sooner deadline."""
        return self._total_timeout_s

    @property
    def base_url(self) -> str:
        """Where requests go."""
        return self._base_url

    @property
    def native_structured_output(self) -> bool:
        """Whether ``ProviderRequest.response_format`` is sent natively."""
        return self.supports_structured_output

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(model={self._model!r}, base_url={self._base_url!r}, "
            f"stream={self._stream})"
        )

    async def aclose(self) -> None:
        """Close the client this provider owns on the running loop (an injected one stays open)."""
        await self._clients.aclose()

    async def __aenter__(self: T) -> T:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def stream(self, request: ProviderRequest) -> AsyncIterator[ProviderEvent]:
        """Send one request, streaming events and ending with ``ResponseDone``.

        Raises:
            ConfigurationError: No model or no API key is configured.
            LLMError: The call failed and no retry is left or allowed.
            ModelRequestsBlocked: Real model requests are blocked (``openprogram.testing``).
        """
        model = request.model or self._model
        if not model:
            raise ConfigurationError(
                f"{self._name}: no model given: pass model=... to {type(self).__name__}, use "
                f'a provider string like "{self.default_name}:<model>", or set Runtime(model=...)'
            )
        headers = masked_headers(self._auth_headers(), ())  # '***' in traceback locals
        body = self._request_body(request, model, self._stream)
        data = json.dumps(body, ensure_ascii=False).encode()
        url = self._url(model, self._stream)
        # After the provider's own configuration checks (model, key), before anything is sent.
        check_model_request(self._name, url)
        retries = self._max_retries if request.max_retries is None else request.max_retries
        request, own = self._bounded(request)

        def attempt() -> AsyncGenerator[ProviderEvent, None]:
            return self._attempt(url, headers, data, request)

        try:
            async for event in with_retries(
                attempt,
                body_size=len(data),
                max_retries=retries,
                deadline=request.deadline,
                backoff=self._backoff,
                provider=self._name,
                model=model,
            ):
                yield event
        except LLMError as err:
            if own and err.reason == "timeout" and not err.retryable:
                set_message(err, err.message.replace(_EXEC_HINT, self._own_hint()))
            raise

    def _bounded(self, request: ProviderRequest) -> tuple[ProviderRequest, bool]:
        """The request with the provider's total deadline applied; whether it is the binding one."""
        if self._total_timeout_s is None:
            return request, False
        own = time.monotonic() + self._total_timeout_s
        if request.deadline is not None and request.deadline <= own:
            return request, False
        return replace(request, deadline=own), True

    def _own_hint(self) -> str:
        return (
            f"the provider's total_timeout_s={self._total_timeout_s:g}; pass exec(timeout_s=...) "
            f"or {type(self).__name__}(total_timeout_s=...) if the model needs longer"
        )

    # -- hooks for the wire modules ------------------------------------------------------

    def _url(self, model: str, stream: bool) -> str:
        raise NotImplementedError

    def _auth_headers(self) -> dict[str, str]:
        raise NotImplementedError

    def _body(self, request: ProviderRequest, model: str, stream: bool) -> dict[str, Any]:
        raise NotImplementedError

    def _parse(self, data: Any, request: ProviderRequest) -> AssistantMessage:
        raise NotImplementedError

    def _stream_parser(self, request: ProviderRequest) -> StreamParser:
        raise NotImplementedError

    def _decoder(self) -> Decoder:
        raise NotImplementedError

    def _finalize(self, message: AssistantMessage, request: ProviderRequest) -> AssistantMessage:
        """Last touch on a reply before it is returned (undoing a request-side transform)."""
        return message

    def _request_body(self, request: ProviderRequest, model: str, stream: bool) -> dict[str, Any]:
        """The body ``request`` goes out with: its history as this wire can take it
        (``_history.sendable``), the wire's ``_body``, then ``extra_body`` laid over it."""
        request = replace(request, messages=sendable(request.messages, self.default_name))
        return merged_body(self._body(request, model, stream), self._extra_body)

    def _done(self, message: AssistantMessage, request: ProviderRequest) -> AssistantMessage:
        # Stamped with the wire, whose provider_meta only this wire takes back (_history).
        return stamped(self._finalize(message, request), self.default_name)

    def _sign(self, url: str, headers: dict[str, str], body: bytes) -> dict[str, str]:
        """Per-attempt signing (Bedrock SigV4); other providers send ``headers`` as is."""
        return headers

    def _classify(self, status: int, headers: httpx.Headers, body: bytes) -> LLMError:
        """An HTTP error response as an ``LLMError`` (override for provider-specific codes)."""
        message, code = error_fields(body)
        return status_error(status, message, code=code, retry_after=retry_after_s(headers))

    def _secrets(self) -> list[str | None]:
        return [self._api_key]

    def _require_key(self) -> str:
        """The API key from ``api_key=`` or the environment, else a ConfigurationError."""
        key = self._api_key or self._env_key()
        if not key:
            where = f"set the {self._key_env} environment variable or " if self._key_env else ""
            raise ConfigurationError(
                f"{self._name}: no API key: {where}pass api_key=... to {type(self).__name__}"
            )
        return key

    def _env_key(self) -> str | None:
        # Read at request time, never at construction or import (nothing happens at import).
        return os.environ.get(self._key_env) if self._key_env else None

    # -- one attempt ---------------------------------------------------------------------

    async def _attempt(
        self, url: str, headers: Mapping[str, str], data: bytes, request: ProviderRequest
    ) -> AsyncGenerator[ProviderEvent, None]:
        deadline = request.deadline
        client = self._client or await self._clients.get()
        sent = {
            "content-type": "application/json",
            "accept": "text/event-stream" if self._stream else "application/json",
            "user-agent": "openprogram",
            **headers,
            **self._extra_headers,
        }
        sent = masked_headers(self._sign(url, sent, data), headers)
        timeout = self._timeout if self._timeout is not None else httpx.USE_CLIENT_DEFAULT
        http_request = client.build_request(
            "POST", url, headers=sent, content=data, timeout=timeout
        )
        try:
            response = await self._guard(
                client.send(http_request, stream=True), deadline, "while waiting for the response"
            )
            try:
                async for event in self._response_events(response, request):
                    yield event
            finally:
                await response.aclose()
        except LLMError as err:
            # One place scrubs every failure text, whichever wire part produced it.
            raise scrubbed(err, Redactor(self._secrets())) from err.__cause__

    async def _response_events(
        self, response: httpx.Response, request: ProviderRequest
    ) -> AsyncGenerator[ProviderEvent, None]:
        deadline = request.deadline
        if response.status_code >= 400:
            raise await self._status_failure(response, deadline)
        if self._stream and not is_json(response):
            async for event in self._read_stream(request, response.aiter_bytes()):
                yield event
            return
        # Also a plain JSON reply to a streaming request: some OpenAI-compatible servers
        # ignore "stream": true, and an error object may come with status 200.
        body = await self._guard(read_whole(response), deadline, "while reading the response")
        if self._stream and looks_like_sse(body):
            # ... while others stream SSE under a JSON content type: decode it as the stream.
            async for event in self._read_stream(request, once(body)):
                yield event
            return
        message = self._done(self._parse(load_json(body, "the response body"), request), request)
        for event in message_events(message):
            yield event
        yield ResponseDone(message)

    async def _status_failure(self, response: httpx.Response, deadline: float | None) -> LLMError:
        try:
            body = await self._guard(read_head(response), deadline, "while reading the error")
        except LLMError:
            body = b""  # the status alone still classifies the failure; the body was a bonus
        # Scrub the whole head before cutting it, so no cut can leave part of a key.
        body = Redactor(self._secrets()).scrub_bytes(body)[:MAX_ERROR_BODY]
        return hinted(self._classify(response.status_code, response.headers, body))

    def _read_stream(
        self, request: ProviderRequest, chunks: AsyncIterator[bytes]
    ) -> AsyncGenerator[ProviderEvent, None]:
        return read_stream(
            chunks,
            self._decoder(),
            self._stream_parser(request),
            deadline=request.deadline,
            redact=Redactor(self._secrets()),
            done=lambda message: self._done(message, request),
        )

    async def _guard(self, aw: Awaitable[T], deadline: float | None, what: str) -> T:
        """Await ``aw`` within the deadline, turning transport failures into ``LLMError``."""
        return await guarded(aw, deadline, what, Redactor(self._secrets()))
