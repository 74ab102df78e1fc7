"""``LocalProvider``: the embedded model behind llama.cpp's OpenAI-compatible server.

It runs one model call through the pipeline (``_pipeline``): the request is
prepared, sent by the wire with the pipeline's body, its reply read by the
reply stage, and a broken or failed reply recovered from (asked again, the
server restarted), each step as the model's profile says.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from contextlib import aclosing
from dataclasses import replace
from typing import Any, Literal, Self

import httpx

from openprogram.exceptions import LLMError, UserError
from openprogram.messages import Usage
from openprogram.providers._allow import check_model_request
from openprogram.providers._http_provider import DEFAULT_TOTAL_TIMEOUT_S
from openprogram.providers._wire import set_message
from openprogram.providers.base import (
    ProviderEvent,
    ProviderRequest,
    ResponseDone,
    RetryScheduled,
)
from openprogram.providers.local._embedded import ensure_server, supervisor_for
from openprogram.providers.local._guards import BrokenReply, shaped
from openprogram.providers.local._pipeline import LocalRequest, prepare, reask
from openprogram.providers.local._profile import LOCAL_MODEL, weights_for
from openprogram.providers.local._wire import (
    INVALID_OUTPUT,
    Attempts,
    LocalWire,
    extra_stops,
    measured,
    prompt_measure,
    served_model,
)

__all__ = ["LocalProvider", "is_invalid_output"]

_log = logging.getLogger("openprogram.providers.local")
_EMBEDDED = (
    "the embedded local model, which would have been started (it is also what Runtime() "
    "uses when no provider is configured)"
)


def is_invalid_output(err: LLMError) -> bool:
    """Whether llama.cpp failed the request because it could not parse the model's output."""
    text = f"{err.provider_message or ''} {err.message}"
    return INVALID_OUTPUT in text


class LocalProvider:
    """An embedded Qwen2.5-Coder model behind llama.cpp's OpenAI-compatible server.

    Args:
        model: The embedded model: ``"qwen2.5-coder-0.5b"`` (``None``: this default),
            ``"qwen2.5-coder-1.5b"`` (extra ``local-large``) or
            ``"qwen2.5-coder-0.5b-q4_0"`` (the default's faster Q4_0 copy, made on
            first use); see ``LOCAL_MODELS``. A
            request naming another of them (``exec(model=...)``) is served by that one.
        api_key: Key for a server started with one (only with ``base_url``).
        base_url: Use an already running llama.cpp server (including ``/v1``)
            instead of the embedded one; it should run ``chat_template.jinja``.
        client: An ``httpx.AsyncClient`` to use (never closed by the provider).
        stream: Use SSE streaming (``False``: one JSON response).
        max_retries: HTTP-level retries of retryable failures per call (a local
            server rarely has any; a dead one is restarted instead).
        timeout: Seconds per read, or an ``httpx.Timeout`` (default 600 s).
        total_timeout_s: Seconds one request to the server may take in all (its
            HTTP retries included; a re-ask and the call-share probe each get the
            same limit) when the exec's ``timeout_s`` ends it no sooner; ``None``:
            no limit of the provider's own.
        invalid_output: What to do when, under ``tool_choice="auto"``, a reply's calls
            cannot be used (they name a tool not offered, break off, or repeat calls
            already made): ``"answer_in_text"`` asks again; ``"raise"`` raises.
        extra_body: Extra request fields, e.g. ``{"temperature": 0}``.
        call_threshold: Under ``tool_choice="auto"``, ask for a plain answer when the
            model's first token opens a call with less than this probability (one
            extra token, read first; see ``docs/local-model.md``). ``None`` (the
            default): off. A threshold that suits specific requests can turn vague
            ones into plain answers.

    Raises:
        ConfigurationError: ``model`` is not an embedded model's id.
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        client: httpx.AsyncClient | None = None,
        stream: bool = True,
        max_retries: int = 1,
        timeout: float | httpx.Timeout | None = None,
        total_timeout_s: float | None = DEFAULT_TOTAL_TIMEOUT_S,
        invalid_output: Literal["answer_in_text", "raise"] = "answer_in_text",
        extra_body: Mapping[str, Any] | None = None,
        call_threshold: float | None = None,
    ) -> None:
        weights_for(model)  # refuses an unknown id, listing the known ones
        self._model = model or LOCAL_MODEL
        if invalid_output not in ("answer_in_text", "raise"):
            raise UserError(f'invalid_output={invalid_output!r}: use "answer_in_text" or "raise"')
        self._external_url = base_url.rstrip("/") if base_url else None
        self._api_key = api_key
        self._client = client
        self._stream = stream
        self._max_retries = max_retries
        self._timeout = timeout
        if total_timeout_s is not None and not total_timeout_s > 0:
            raise UserError(
                f"total_timeout_s={total_timeout_s!r}: use seconds > 0, or None for no limit"
            )
        self._total_timeout_s = total_timeout_s
        extra_stops(extra_body or {})  # a stop llama.cpp cannot take: refused now, not later
        self._extra_body = extra_body
        self._invalid_output = invalid_output
        self._call_threshold = _threshold(call_threshold)
        self._wires: dict[str, LocalWire] = {}
        """One wire per embedded model asked for (each with its HTTP clients), kept so that
        requests alternating between models do not leave clients behind."""
        self._served: str | None = None

    @property
    def name(self) -> str:
        """Provider id for events and errors: ``"local"``."""
        return "local"

    @property
    def model(self) -> str:
        """The embedded model's id, e.g. ``"qwen2.5-coder-0.5b"``."""
        return self._model

    @property
    def native_structured_output(self) -> bool:
        """llama.cpp constrains output to a JSON schema (``response_format``) natively."""
        return True

    def __repr__(self) -> str:
        where = self._external_url or "embedded"
        return f"LocalProvider(model={self._model!r}, server={where!r})"

    async def aclose(self) -> None:
        """Close the HTTP clients this provider owns on the running loop (not the servers)."""
        for wire in self._wires.values():
            await wire.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def stream(self, request: ProviderRequest) -> AsyncIterator[ProviderEvent]:
        """Send one request to the local server, streaming events ending with ``ResponseDone``.

        Raises:
            ConfigurationError: The ``local`` extra is missing, or another model was named.
            LLMError: The call failed and no recovery applied (see the module docstring).
            ModelRequestsBlocked: Real model requests are blocked (nothing is started).
        """
        check_model_request(self.name, self._external_url or _EMBEDDED)
        weights_for(request.model)  # refuses an unknown id before anything is started
        model = request.model or self._model
        sent, spent = prepare(request, model), Usage()
        if self._call_threshold is not None and _steerable(sent):  # guard call_share_probe
            wire = await self._wire_for(model, restart=False)
            probe = wire.share_probe(sent)
            yield probe.sent
            share, spent = await wire.call_share(probe)
            sent = _steered(sent, share, self._call_threshold)
        state = Attempts()
        recovered = 0
        while True:
            wire = await self._wire_for(model, restart=state.restart)
            try:
                # aclosing: a caller that stops early must not leave the HTTP response open.
                async with aclosing(self._answered(state, sent, spent, wire)) as answered:
                    async for event in answered:
                        yield event
                return
            except BrokenReply as broken:
                error = self._broken_error(broken, sent, wire)
                retry = self._reasked(broken, sent, recovered, wire.max_tokens)
                if retry is None or self._invalid_output == "raise":
                    raise error from None
                # A real model call, asked again: its tokens count with the reply that follows.
                if (measure := prompt_measure(sent, wire)) is not None:
                    yield measure.sent
                spent += await measured(broken.message.usage, measure, wire)
                sent, recovered = retry, recovered + 1
                _log.info("%s; asking again", error.message)
                yield RetryScheduled(attempt=state.sent, delay_s=0.0, error=error)
            except LLMError as err:
                again = None if recovered or state.delivered else self._recovery(err, sent)
                if again is None:
                    raise await self._explained(err, sent) from err.__cause__
                sent, state.restart = again
                recovered += 1
                yield RetryScheduled(attempt=state.sent, delay_s=0.0, error=err)

    async def _answered(
        self, state: Attempts, sent: LocalRequest, spent: Usage, wire: LocalWire
    ) -> AsyncGenerator[ProviderEvent, None]:
        """The reply's events, ending with ``ResponseDone`` whose usage includes ``spent``:
        the tokens of the call's other model requests (the call-share probe, replies asked
        again), and the prompt measured if the reply was stopped early with no figures."""
        reply = None
        async with (
            aclosing(state.run(wire, sent)) as events,
            aclosing(shaped(events, sent)) as shown,
        ):
            async for event in shown:
                if isinstance(event, ResponseDone):
                    reply = event.message
                    break  # the last event: close the reply before counting it
                yield event
        if reply is None:
            return
        if (measure := prompt_measure(sent, wire)) is not None:
            yield measure.sent
        usage = await measured(reply.usage, measure, wire) + spent
        yield ResponseDone(reply if usage == reply.usage else replace(reply, usage=usage))

    def _reasked(
        self, broken: BrokenReply, sent: LocalRequest, recovered: int, limit: int | None
    ) -> LocalRequest | None:
        """The re-ask of a broken reply (guard ``reask``), or ``None`` to raise."""
        if recovered >= sent.profile.max_reasks:
            return None
        return reask(sent, cut=broken.message.stop_reason == "length", limit=limit)

    def _recovery(self, err: LLMError, sent: LocalRequest) -> tuple[LocalRequest, bool] | None:
        """The request to try once more and whether to restart the server first, or ``None``
        (guards ``unparsed_call`` and ``restart_server``)."""
        profile = sent.profile
        unparsed = profile.runs("unparsed_call") and is_invalid_output(err)
        if unparsed and sent.tools and sent.tool_choice == "auto":
            # Only a server that parses calls itself (tools sent as `tools`) fails this way.
            if self._invalid_output == "raise":
                return None
            _log.warning(
                "the local model wrote a call llama.cpp could not parse (a tool that does not "
                "exist?); asking once more for a text answer"
            )
            return replace(sent, answer_only=True), False
        restart = profile.runs("restart_server") and self._external_url is None
        if err.reason == "transport" and restart:
            _log.warning("the local model server is unreachable; restarting it and retrying once")
            return sent, True
        return None

    def _broken_error(self, broken: BrokenReply, sent: LocalRequest, wire: LocalWire) -> LLMError:
        return LLMError(
            # Why first: the live tree's "asked again" line shows the start of this message.
            f"the local model's reply was not usable: {broken.why} "
            f"(tool_choice={sent.tool_choice!r})",
            reason="server",
            provider=self.name,
            model=broken.message.model or self._served or sent.model,
            retryable=False,
        )

    async def _explained(self, err: LLMError, sent: ProviderRequest) -> LLMError:
        if is_invalid_output(err):
            set_message(
                err,
                "the local model's reply could not be parsed as text or as a call of an offered "
                f"tool (tool_choice={sent.tool_choice!r}); llama.cpp said: {err.message}",
            )
        err.provider = err.provider or self.name
        if not err.model or err.model == sent.model:
            err.model = await self._served_model(sent.model or self._model)
        return err

    async def _served_model(self, model: str) -> str:
        """The model id the server reports (``GET /v1/models``), else the embedded one's."""
        if self._served is None and self._external_url is not None:
            self._served = await asyncio.to_thread(served_model, self._external_url)
        return self._served or model

    async def _wire_for(self, model: str, *, restart: bool) -> LocalWire:
        url = self._external_url
        if url is None:
            url = await asyncio.to_thread(_embedded_url, model, restart)
        wire = self._wires.get(model)
        if wire is None or wire.base_url != url:
            if wire is not None:  # the server was restarted on another port
                await wire.aclose()
            wire = self._wires[model] = LocalWire(
                model=model,
                api_key=self._api_key,
                base_url=url,
                client=self._client,
                stream=self._stream,
                max_retries=self._max_retries,
                timeout=self._timeout,
                total_timeout_s=self._total_timeout_s,
                extra_body=self._extra_body,
                name=self.name,
            )
        return wire


def _steered(sent: LocalRequest, share: float | None, threshold: float) -> LocalRequest:
    """``sent``, or a plain-answer request when the model is unsure it should call."""
    if share is None or share >= threshold:
        return sent
    _log.debug("call share %.2f < %.2f: asking for a plain answer", share, threshold)
    return replace(sent, answer_only=True)


def _embedded_url(model: str, restart: bool) -> str:
    if not restart:
        return ensure_server(model)
    return supervisor_for(model).ensure(check_health=True)


def _threshold(value: object) -> float | None:
    if value is None:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool) and 0.0 <= value <= 1.0:
        return float(value)
    raise UserError(f"call_threshold={value!r}: use a probability from 0 to 1, or None")


def _steerable(sent: LocalRequest) -> bool:
    """Whether the call-share probe applies: the guard runs for the model, functions are
    offered, no answer format is asked for."""
    return (
        sent.profile.runs("call_share_probe")
        and bool(sent.tools)
        and sent.tool_choice == "auto"
        and not sent.answer_only
        and sent.response_format is None
        and sent.answer_schema is None
    )
