"""No fragment of a key survives any cut, and the data policy holds for failure texts.

Error texts are cut (an error body to 2,000 characters, a bad body's excerpt to
200, the error body itself to 64 KiB). A key echoed by a server may straddle
any of those cuts: it is scrubbed from the whole text first, so not even 8 of
its characters reach ``str(exc)``, the ``ProviderError`` event, an OTel span
or the CLI's output, whatever the offset.

A body that is not the wire format may be the model's answer, so under the
default data policy its text stays out of the message and the events; it is
kept (scrubbed, cut) on ``LLMError.body_excerpt`` and, with
``trace_payloads=True``, on ``ProviderError.body_excerpt``.
"""

from __future__ import annotations

import json
import socket
import traceback
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from openprogram import LLMError, Runtime
from openprogram.cli import main
from openprogram.events import ProviderError
from openprogram.otel import OpenTelemetryObserver
from openprogram.providers import (
    AnthropicProvider,
    BedrockProvider,
    GeminiProvider,
    OpenAIProvider,
    OpenAIResponsesProvider,
)

from ._helpers import fail, request
from ._server import Reply, WireServer

# Real provider wires against loopback servers: model requests allowed (tests/conftest.py).
pytestmark = [pytest.mark.usefixtures("clean_env"), pytest.mark.model_requests]

KEY = "sk-proj-" + "".join(chr(ord("A") + i % 26) + str(i % 10) for i in range(20))
assert len(KEY) == 48
ANSWER = "The secret plan is to meet at noon by the old mill"


def fragments(text: str, secret: str = KEY, size: int = 8) -> list[str]:
    """Every ``size``-character piece of ``secret`` found in ``text``."""
    return [
        secret[i : i + size] for i in range(len(secret) - size + 1) if secret[i : i + size] in text
    ]


def _provider(url: str, *, stream: bool = False) -> OpenAIProvider:
    return OpenAIProvider(
        base_url=f"{url}/v1", api_key=KEY, model="m", stream=stream, max_retries=0
    )


def _visible(err: LLMError) -> str:
    return " | ".join(
        [
            str(err),
            repr(err),
            err.message,
            err.provider_message or "",
            getattr(err, "body_excerpt", None) or "",
        ]
    )


# Each case: the cut it targets, and a reply that puts the key at ``offset`` of the cut text.
def _plain_error(offset: int) -> Reply:  # error_fields: a non-JSON error body, cut at 2,000
    return Reply(400, "x" * offset + KEY + " (echoed)", content_type="text/plain")


def _json_error_without_message(offset: int) -> Reply:  # the whole JSON text, cut at 2,000
    pad = "x" * max(0, offset - len('{"error": {"note": "'))
    return Reply(400, '{"error": {"note": "' + pad + KEY + '"}}')


def _no_choices(offset: int) -> Reply:  # a 200 body of the wrong shape, cut at 200
    pad = "x" * max(0, offset - len("{'note': '"))
    return Reply(200, {"note": pad + KEY})


def _malformed(offset: int) -> Reply:  # a 200 body that is not JSON, cut at 200
    return Reply(200, "x" * offset + KEY, content_type="application/json")


def _huge_error(offset: int) -> Reply:  # the error body itself, capped at 64 KiB
    return Reply(500, "x" * offset + KEY + "y" * 100, content_type="text/plain")


CUTS: dict[str, tuple[int, Any]] = {
    "error-body-2000": (2000, _plain_error),
    "error-json-2000": (2000, _json_error_without_message),
    "no-choices-200": (200, _no_choices),
    "malformed-200": (200, _malformed),
    "error-cap-64KiB": (64 * 1024, _huge_error),
}


@pytest.mark.parametrize("cut", sorted(CUTS))
def test_no_key_fragment_survives_any_cut_offset(cut: str) -> None:
    at, reply = CUTS[cut]
    found: dict[int, list[str]] = {}
    with WireServer() as wire:
        for offset in range(at - len(KEY) - 1, at + 2):
            wire.push(reply(offset))
            err = fail(_provider(wire.url), request()).failure
            leaked = fragments(_visible(err))
            if leaked:
                found[offset] = leaked
    assert found == {}


@pytest.fixture
def spans() -> Iterator[tuple[OpenTelemetryObserver, InMemorySpanExporter]]:
    exporter = InMemorySpanExporter()
    tracer = TracerProvider()
    tracer.add_span_processor(SimpleSpanProcessor(exporter))
    yield OpenTelemetryObserver(tracer), exporter
    tracer.shutdown()


def _span_texts(exporter: InMemorySpanExporter) -> str:
    out = []
    for span in exporter.get_finished_spans():
        out.append(str(span.status.description))
        out.append(json.dumps(dict(span.attributes or {}), default=str))
        for event in span.events:
            out.append(json.dumps(dict(event.attributes or {}), default=str))
    return " | ".join(out)


@pytest.mark.parametrize("offset", [2000 - 47, 2000 - 24, 2000 - 8, 2000 - 1])
@pytest.mark.parametrize("payloads", [False, True])
def test_straddling_key_reaches_no_event_or_span(
    offset: int, payloads: bool, spans: tuple[OpenTelemetryObserver, InMemorySpanExporter]
) -> None:
    observer, exporter = spans
    events: list[Any] = []
    with WireServer() as wire:
        wire.push(_plain_error(offset))
        rt = Runtime(
            _provider(wire.url), observers=[events.append, observer], trace_payloads=payloads
        )
        with pytest.raises(LLMError) as info:
            rt.exec("hi", tools=[])
    failures = [e for e in events if isinstance(e, ProviderError)]
    assert failures
    assert "x" * 20 in failures[0].message
    assert fragments(_visible(info.value)) == []
    assert fragments(" | ".join(repr(e) for e in events)) == []
    assert fragments(_span_texts(exporter)) == []


@pytest.mark.parametrize("offset", [2000 - 40, 2000 - 9])
@pytest.mark.parametrize("as_json", [False, True])
def test_straddling_key_reaches_no_cli_output(
    offset: int, as_json: bool, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with WireServer() as wire:
        wire.push(_plain_error(offset))
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("OPENAI_BASE_URL", f"{wire.url}/v1")
        code = main(["demo", "--model", "openai:m", *(["--json"] if as_json else [])])
    out = capsys.readouterr()
    assert code == 1
    assert "x" * 20 in out.err  # the failure is reported ...
    assert fragments(out.out + out.err) == []  # ... without any piece of the key


# -- the data policy: a malformed body is the model's answer -------------------------------


@pytest.mark.parametrize("stream", [False, True])
def test_malformed_body_text_stays_out_of_message_events_and_spans(
    stream: bool, spans: tuple[OpenTelemetryObserver, InMemorySpanExporter]
) -> None:
    observer, exporter = spans
    events: list[Any] = []
    body = f'{{"choices": [{{"message": {{"content": "{ANSWER}'  # cut off mid-answer
    reply = (
        Reply(chunks=[f"data: {body}\n\n"])
        if stream
        else Reply(200, body, content_type="application/json")
    )
    with WireServer() as wire:
        wire.push(reply)
        rt = Runtime(_provider(wire.url, stream=stream), observers=[events.append, observer])
        with pytest.raises(LLMError) as info:
            rt.exec("hi", tools=[])
    err = info.value
    assert "malformed JSON" in str(err)
    assert "secret plan" not in str(err)
    assert "secret plan" not in repr(err)
    assert err.body_excerpt is not None
    assert "secret plan" in err.body_excerpt
    assert len(err.body_excerpt) <= 200
    assert "secret plan" not in " | ".join(repr(e) for e in events)
    assert "secret plan" not in _span_texts(exporter)


def test_malformed_body_excerpt_reaches_events_only_with_trace_payloads() -> None:
    events: list[Any] = []
    with WireServer() as wire:
        wire.push(Reply(200, f"not json: {ANSWER}", content_type="application/json"))
        rt = Runtime(_provider(wire.url), observers=[events.append], trace_payloads=True)
        with pytest.raises(LLMError):
            rt.exec("hi", tools=[])
    failure = next(e for e in events if isinstance(e, ProviderError))
    assert failure.body_excerpt is not None
    assert "secret plan" in failure.body_excerpt
    assert "secret plan" not in failure.message


# -- exception objects: the request copies and traceback locals -----------------------------


def _dead_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


FACTORIES: dict[str, Callable[[str], Any]] = {
    "openai": lambda url: OpenAIProvider(base_url=f"{url}/v1", api_key=KEY, model="m"),
    "openai-responses": lambda url: OpenAIResponsesProvider(
        base_url=f"{url}/v1", api_key=KEY, model="m"
    ),
    "anthropic": lambda url: AnthropicProvider(base_url=url, api_key=KEY, model="m"),
    "gemini": lambda url: GeminiProvider(base_url=url, api_key=KEY, model="m"),
    "bedrock": lambda url: BedrockProvider(
        endpoint_url=url, api_key=KEY, model="m", region="us-east-1"
    ),
    "bedrock-sigv4": lambda url: BedrockProvider(
        endpoint_url=url,
        model="m",
        region="us-east-1",
        aws_access_key_id="AKIDEXAMPLE",
        aws_secret_access_key=KEY,
        aws_session_token=KEY[::-1],
    ),
}


def _chain(err: BaseException) -> list[BaseException]:
    out: list[BaseException] = []
    current: BaseException | None = err
    while current is not None and current not in out:
        out.append(current)
        current = current.__cause__ or current.__context__
    return out


def _request_texts(err: BaseException) -> str:
    parts = []
    for exc in _chain(err):
        if isinstance(exc, httpx.RequestError):
            req = exc.request
            parts += [str(req.url), repr(dict(req.headers)), req.content.decode(errors="replace")]
    return " | ".join(parts)


def _with_locals(err: BaseException) -> str:
    return "".join(traceback.TracebackException.from_exception(err, capture_locals=True).format())


@pytest.mark.parametrize("name", sorted(FACTORIES))
@pytest.mark.parametrize("failure", ["connect", "read-timeout"])
def test_exceptions_hold_only_redacted_requests_and_mask_locals(
    name: str, failure: str, wire: WireServer
) -> None:
    if failure == "connect":
        url = _dead_url()
    else:
        url = wire.url
        wire.push(Reply(delay_s=2.0), Reply(delay_s=2.0))
    provider = FACTORIES[name](url)
    provider._timeout = httpx.Timeout(0.2)
    provider._max_retries = 0
    with pytest.raises(LLMError) as info:
        Runtime(provider).exec("the user's private question", tools=[])
    err = info.value
    requests = _request_texts(err)
    assert "***" in requests  # the credential header is there, redacted
    assert fragments(requests) == []
    assert fragments(requests, KEY[::-1]) == []
    assert "private question" not in requests  # nor the conversation (the body)
    formatted = _with_locals(err)
    assert fragments(formatted) == []
    assert fragments(formatted, KEY[::-1]) == []


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_every_provider_scrubs_before_cutting(name: str, wire: WireServer) -> None:
    found: dict[int, list[str]] = {}
    for offset in range(2000 - len(KEY) - 1, 2000 + 2):
        wire.push(_plain_error(offset))
        provider = FACTORIES[name](wire.url)
        provider._max_retries = 0
        err = fail(provider, request()).failure
        leaked = fragments(_visible(err)) + fragments(_visible(err), KEY[::-1])
        if leaked:
            found[offset] = leaked
    assert found == {}
