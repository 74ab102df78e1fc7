"""Chat Completions to the local llama.cpp server, with the fields only llama.cpp knows.

``LocalWire`` is ``OpenAIProvider`` with the body built by the pipeline's
steps (``_pipeline.BODY_STEPS``): the tools go to the chat template as its
``functions`` argument (``chat_template_kwargs``), never as ``tools`` (with
``tools`` llama.cpp parses calls itself and fails the request, HTTP 500, on a
reply it cannot parse, and refuses a grammar of ours), and the provider reads
the calls. It also reads llama.cpp's ``timings`` (``cache_n``, prompt tokens it
did not recompute, becomes ``Usage.cached_tokens``; per-token figures feed the
``Meter`` of a reply stopped early) and sends the side requests (the
call-share probe, a prompt measure) beside a reply's own.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncGenerator, Mapping
from dataclasses import replace
from typing import Any, Unpack

import httpx

from openprogram.events import SideRequest
from openprogram.exceptions import LLMError, UserError
from openprogram.messages import AssistantMessage, Usage
from openprogram.providers._http_provider import HttpOptions, StreamParser
from openprogram.providers._sse import SSEEvent
from openprogram.providers.base import (
    ProviderEvent,
    ProviderRequest,
    RequestSent,
    RetryScheduled,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
)
from openprogram.providers.local._guards import Meter, call_share, pick_functions, probe_body
from openprogram.providers.local._pipeline import (
    BodyContext,
    LocalRequest,
    as_local,
    body_fields,
    shown_tools,
)
from openprogram.providers.openai import (
    ChatStream,
    OpenAIProvider,
    chat_usage,
    parse_chat_completion,
)

__all__ = [
    "INVALID_OUTPUT",
    "Attempts",
    "LocalWire",
    "SideCall",
    "extra_stops",
    "measured",
    "prompt_measure",
    "served_model",
]

_log = logging.getLogger("openprogram.providers.local")

INVALID_OUTPUT = "produced output that does not match the expected"
"""llama.cpp: "The model produced output that does not match the expected <parser> format"."""


class SideCall:
    """A request sent beside a reply's own: not streamed, tried once, its tokens counted
    with the reply. Yield ``sent`` when it goes out, so observers see it
    (``ProviderRequestSent.side_request``)."""

    __slots__ = ("data", "purpose", "request", "what")

    def __init__(
        self, request: ProviderRequest, purpose: SideRequest, body: dict[str, Any], what: str
    ) -> None:
        self.request = request
        """The reply's request (the side request keeps to its deadline)."""
        self.purpose: SideRequest = purpose
        """What it is for."""
        self.data = json.dumps(body).encode()
        """The body as sent."""
        self.what = what
        """Where a failure happened, for its message."""

    @property
    def sent(self) -> RequestSent:
        """The event saying it went on the wire."""
        return RequestSent(attempt=1, prompt_size_bytes=len(self.data), side_request=self.purpose)


def extra_stops(extra_body: Mapping[str, Any]) -> list[str]:
    """The stop strings of the user's own in ``extra_body`` (sent beside the echo stops).

    Raises:
        UserError: ``stop`` is neither a string nor a list of strings.
    """
    stop = extra_body.get("stop")
    if stop is None:
        return []
    if isinstance(stop, str):
        return [stop]
    if isinstance(stop, list | tuple) and all(isinstance(s, str) for s in stop):
        return list(stop)
    raise UserError(
        f"extra_body={{'stop': {stop!r}}}: give the stop sequences as a string or a list of strings"
    )


class LocalWire(OpenAIProvider):
    """Chat Completions to the local server (see the module docstring)."""

    def __init__(self, **options: Unpack[HttpOptions]) -> None:
        super().__init__(api_key_env=None, **options)
        limit = self._extra_body.pop("max_tokens", None)  # _body sends it, raised for a re-ask
        self._max_tokens = limit if isinstance(limit, int) else None
        # _body sends them, with the echo stops once a result is in (laid over, they would go)
        self._stops = extra_stops(self._extra_body)
        self._extra_body.pop("stop", None)

    @property
    def max_tokens(self) -> int | None:
        """The output limit every request carries (``extra_body``), if any."""
        return self._max_tokens

    def _body(self, request: ProviderRequest, model: str, stream: bool) -> dict[str, Any]:
        sent = request if isinstance(request, LocalRequest) else as_local(request, str(self.model))
        body = super()._body(replace(sent, tools=()), model, stream)
        functions = [self._tool(spec)["function"] for spec in shown_tools(sent)]
        context = BodyContext(
            stream=stream,
            max_tokens=self._max_tokens,
            stops=tuple(self._stops),
            functions=(*functions, *pick_functions(sent.picks)),
        )
        return body_fields(body, sent, context)

    def share_probe(self, request: ProviderRequest) -> SideCall:
        """The call-share probe of ``request``: its body asked for one token with the top
        candidates (``_odds``). Send it with ``call_share``."""
        body = probe_body(self._sent_body(request))
        return SideCall(request, "call_share", body, "while probing the model's first token")

    async def call_share(self, probe: SideCall) -> tuple[float | None, Usage]:
        """The model's share of call openers on its first token (``_odds``), from ``probe``.

        Returns:
            The share (``None`` if the probe failed or its reply is unreadable), and
            the tokens the probe cost as the server counted them (none if it failed).
        """
        data = await self._side_request(probe)
        if data is None:
            return None, Usage()
        return call_share(data), _usage_of(data)

    def prompt_measure(self, request: ProviderRequest) -> SideCall:
        """A one-token request measuring ``request``'s prompt. Send it with ``prompt_usage``.

        For a reply stopped early by a server that sent no ``timings``: its prompt is
        then in the server's cache, so the measurement costs about one token.
        """
        body = self._sent_body(request)
        body.pop("grammar", None)  # the prompt is what is measured; any token will do
        body["max_tokens"] = 1
        return SideCall(request, "prompt_usage", body, "while measuring the prompt")

    async def prompt_usage(self, measure: SideCall) -> Usage | None:
        """The prompt tokens as the server counts them (``input_tokens``, ``cached_tokens``),
        from ``measure``; ``None`` if that failed."""
        data = await self._side_request(measure)
        usage = _usage_of(data) if data is not None else Usage()
        if not usage.input_tokens:
            return None
        return replace(usage, output_tokens=0)

    def _sent_body(self, request: ProviderRequest) -> dict[str, Any]:
        """``request``'s body as the reply's request sends it (``extra_body`` laid over it),
        not streamed: a side request must show the model the same prompt."""
        return self._request_body(request, str(self.model), stream=False)

    async def _side_request(self, side: SideCall) -> Any | None:
        """Post ``side`` (not streamed) beside its request's reply: its JSON, else ``None``.

        Bounded like the reply's own request: the provider's read timeout, and
        the exec's deadline or the provider's ``total_timeout_s``, whichever ends sooner.
        """
        bounded, _ = self._bounded(side.request)
        client = self._client or await self._clients.get()
        headers = {"content-type": "application/json", **self._auth_headers()}
        timeout = self._timeout if self._timeout is not None else httpx.USE_CLIENT_DEFAULT
        post = client.post(
            self._url(str(self.model), False),
            content=side.data,
            headers={**headers, **self._extra_headers},
            timeout=timeout,
        )
        try:
            response = await self._guard(post, bounded.deadline, side.what)
            if response.status_code != 200:
                return None
            return response.json()
        except (LLMError, ValueError):
            # Transport failures, timeouts and the deadline (LLMError from _guard), a body that
            # is not JSON: a side request only informs. The reply's own request then runs as
            # usual and meets the same deadline, where it is reported.
            return None

    def _classify(self, status: int, headers: httpx.Headers, body: bytes) -> LLMError:
        err = super()._classify(status, headers, body)
        if INVALID_OUTPUT in (err.provider_message or ""):
            err.retryable = False  # the same prompt mostly fails the same way; see LocalProvider
        return err

    def _parse(self, data: Any, request: ProviderRequest) -> AssistantMessage:
        return _with_cached(parse_chat_completion(data), data)

    def _stream_parser(self, request: ProviderRequest) -> StreamParser:
        meter = request.meter if isinstance(request, LocalRequest) else None
        return _TimedChatStream(meter or Meter())


class _TimedChatStream(ChatStream):
    """``ChatStream`` that also reads llama.cpp's ``timings`` (cached prompt tokens) and
    notes what the reply has cost so far in ``meter``."""

    def __init__(self, meter: Meter) -> None:
        super().__init__()
        self._timings: dict[str, Any] | None = None
        self._meter = meter
        meter.restart()  # one parser per attempt: a retried request starts from nothing

    def feed(self, event: SSEEvent) -> list[ProviderEvent]:
        out = super().feed(event)
        if not self.done and '"timings"' in event.data:  # the last chunk, or every one (_meter)
            parsed = json.loads(event.data)
            if isinstance(parsed, dict) and isinstance(parsed.get("timings"), dict):
                self._timings = self._meter.timings = parsed["timings"]
        if any(isinstance(e, TextDelta) for e in out):
            self._meter.chunks += 1
        return out

    def finish(self, cut_reason: str | None) -> AssistantMessage:
        message = super().finish(cut_reason)
        return _with_cached(message, {"timings": self._timings}) if self._timings else message


def _with_cached(message: AssistantMessage, data: Any) -> AssistantMessage:
    """``message`` whose usage counts llama.cpp's ``timings.cache_n`` as cached tokens."""
    timings = data.get("timings") if isinstance(data, dict) else None
    if not isinstance(timings, dict) or message.usage.cached_tokens:
        return message
    cached = int(timings.get("cache_n") or 0)
    usage = replace(message.usage, cached_tokens=min(cached, message.usage.input_tokens))
    return replace(message, usage=usage)


def _usage_of(data: Any) -> Usage:
    """The tokens of a non-streamed reply (``usage``, cached ones from ``timings``)."""
    usage = data.get("usage") if isinstance(data, dict) else None
    if not isinstance(usage, dict):
        return Usage()
    try:
        return _with_cached(AssistantMessage((), usage=chat_usage(usage)), data).usage
    except (TypeError, ValueError):
        return Usage()  # counts that are not numbers: nothing is known


_CONTENT = (TextDelta, ThinkingDelta, ToolCallDelta)


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
