"""Chat Completions to the local llama.cpp server, with the fields only llama.cpp knows.

- The tools go to the chat template as the ``functions`` template argument
  (``chat_template_kwargs``), not as ``tools``: with ``tools`` llama.cpp parses
  calls itself and fails the request (HTTP 500) on a reply it cannot parse,
  and it refuses a grammar of ours. The provider parses calls (``_calls``).
- ``grammar`` constrains the reply to a plain answer or calls of offered tools
  (``_grammar``); text only when no tool may be called.
- Once a tool result is in, the reply stops where the model starts copying the
  template's request for an answer (``ECHO_STOPS``): copying a long result, the
  0.5B ran on into "Use these results to write a complete answer …".
- ``cache_prompt`` keeps the server's KV cache of the prompt for the next turn,
  and llama.cpp's ``timings.cache_n`` (prompt tokens it did not recompute)
  becomes ``Usage.cached_tokens``.
- An answer-only request (a re-ask, or a reply the call-share probe steered)
  drops the function list from the front of the prompt, so nothing after it
  matched the cache; ``n_cache_reuse`` lets llama.cpp move the conversation's
  cached tokens into place instead of computing them again (``REUSE_CHUNK``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Unpack

import httpx

from openprogram.events import SideRequest
from openprogram.exceptions import LLMError, UserError
from openprogram.messages import AssistantMessage, ToolResultMessage, Usage
from openprogram.providers._http_provider import HttpOptions, StreamParser
from openprogram.providers._sse import SSEEvent
from openprogram.providers.base import ProviderEvent, ProviderRequest, RequestSent, TextDelta
from openprogram.providers.local._grammar import ANSWER_GRAMMAR, answer_grammar, calls_grammar
from openprogram.providers.local._meter import Meter
from openprogram.providers.local._odds import call_share, probe_body
from openprogram.providers.local._picks import Pick, pick_functions, picks_of
from openprogram.providers.openai import (
    ChatStream,
    OpenAIProvider,
    chat_usage,
    parse_chat_completion,
)

__all__ = [
    "ECHO_STOPS",
    "INVALID_OUTPUT",
    "REUSE_CHUNK",
    "LocalRequest",
    "LocalWire",
    "SideCall",
    "extra_stops",
    "request_picks",
    "shown_tools",
]

INVALID_OUTPUT = "produced output that does not match the expected"
"""llama.cpp: "The model produced output that does not match the expected <parser> format"."""


REUSE_CHUNK = 64
"""``n_cache_reuse`` of an answer-only request: the fewest tokens in a row, the same as
in the server's cache at another position, that llama.cpp shifts into place instead of
computing. Sent when the cache should hold the same conversation, asked with the function
list just before (the tokens moved were computed with that list in view). With several
execs on one server at once, the cache may hold another conversation instead: runs this
long (a whole message, not a shared sentence of the template) keep its text from being
moved in by chance. On the `local_llm` suite's 14 re-asks it saved 1,204 of the 1,396
prompt tokens that 16 saved (1,911 computed without it), and the README tour's two
re-asks computed 23 and 25 tokens instead of 119 and 282, as at 16."""


_DRY_MULTIPLIER = 0.8
"""llama.cpp's DRY sampler against verbatim loops: greedy decoding of this small model
otherwise repeats one line of a long answer without end (quotes break its sequences,
so repeated call JSON is not penalised)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class LocalRequest(ProviderRequest):
    """A request with the provider's own adjustments for one attempt."""

    min_max_tokens: int | None = None
    """Raise the output limit to at least this many tokens (a re-ask of a cut reply)."""
    answer_only: bool = False
    """Ask for a plain answer: the function list is left out of the prompt."""
    picks: tuple[Pick, ...] = ()
    """The decision options shown as functions (``request_picks``), worked out once per
    request by ``local_request``: the body lists them and the reply is read against them."""
    meter: Meter | None = field(default=None, compare=False, repr=False)
    """Where the stream parser notes what the reply has cost so far (``_meter``)."""


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


ECHO_STOPS = (
    "If my request needs another function call, reply with the call",
    "Use these results to write a complete answer to my request:",
)
"""The sentences ``chat_template.jinja`` ends a tool-result turn with: a reply that starts
writing one out is copying the prompt, and the server stops it there (``stop``)."""


def extra_stops(extra_body: Mapping[str, Any]) -> list[str]:
    """The stop strings of the user's own in ``extra_body`` (sent beside ``ECHO_STOPS``).

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


def shown_tools(request: ProviderRequest) -> tuple[Any, ...]:
    """The tool specs the model sees for ``request`` (none when it is asked for an answer)."""
    return () if _answer_only(request) else tuple(request.tools)


def request_picks(request: ProviderRequest) -> tuple[Pick, ...]:
    """The decision options shown as functions for ``request`` (``_picks``)."""
    if request.response_format is not None or request.tool_choice != "auto":
        return ()  # a forced call must be a real tool
    if request.tools and not any(isinstance(m, ToolResultMessage) for m in request.messages):
        # Work first: offered as functions on the first turn, the options let this model
        # pick before it looked anything up (refund an order it never checked).
        return ()
    return picks_of(request.answer_schema, (str(spec.get("name")) for spec in request.tools))


def _answer_only(request: ProviderRequest) -> bool:
    return isinstance(request, LocalRequest) and request.answer_only


class LocalWire(OpenAIProvider):
    """Chat Completions to the local server (see the module docstring)."""

    def __init__(self, **options: Unpack[HttpOptions]) -> None:
        super().__init__(api_key_env=None, **options)
        limit = self._extra_body.pop("max_tokens", None)  # _body sends it, raised for a re-ask
        self._max_tokens = limit if isinstance(limit, int) else None
        # _body sends them, with ECHO_STOPS once a result is in (laid over, they would go)
        self._stops = extra_stops(self._extra_body)
        self._extra_body.pop("stop", None)

    @property
    def max_tokens(self) -> int | None:
        """The output limit every request carries (``extra_body``), if any."""
        return self._max_tokens

    def _body(self, request: ProviderRequest, model: str, stream: bool) -> dict[str, Any]:
        body = super()._body(replace(request, tools=()), model, stream)
        body["cache_prompt"] = True
        body["dry_multiplier"] = _DRY_MULTIPLIER
        if stream:
            body["timings_per_token"] = True  # the figures of a reply stopped early (_meter)
        limit = body.get("max_tokens", self._max_tokens)
        floor = request.min_max_tokens if isinstance(request, LocalRequest) else None
        if floor is not None and isinstance(limit, int):
            limit = max(limit, floor)  # the re-ask of a cut reply gets more room
        if limit is not None:
            body["max_tokens"] = limit
        if any(isinstance(m, ToolResultMessage) for m in request.messages):
            body["stop"] = [*ECHO_STOPS, *self._stops]
        elif self._stops:
            body["stop"] = list(self._stops)
        answer = request.answer_schema if request.response_format is None else None
        functions = [self._tool(spec)["function"] for spec in shown_tools(request)]
        picks = request.picks if isinstance(request, LocalRequest) else request_picks(request)
        functions += pick_functions(picks)
        if functions:
            body["chat_template_kwargs"] = {"functions": functions}
            if request.response_format is None:
                auto = request.tool_choice == "auto"
                body["grammar"] = calls_grammar(functions, text=auto, answer=answer)
        elif answer is not None:
            body["grammar"] = answer_grammar(answer)  # a decision's pick, and nothing else
        elif _answer_only(request) and request.response_format is None:
            # Without the function list this model answers; with it, it keeps calling.
            body["grammar"] = ANSWER_GRAMMAR
        if _answer_only(request):
            body["n_cache_reuse"] = REUSE_CHUNK  # extra_body, laid over the body, wins
        return body

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
