"""The token counts of a reply the local provider stops reading early are the server's own.

A streamed calls reply that repeats a call, or an answer caught in a loop, is
closed before its end, so llama.cpp's usage (sent with the last chunk) never
arrives. The provider asks for ``timings_per_token``: llama.cpp then sends
``timings`` with every token (``prompt_n`` + ``cache_n`` prompt tokens,
``predicted_n`` generated so far), and the last ones read are the reply's
figures. A server that sends none: the text chunks are counted (llama.cpp
streams one per token) and the prompt is measured with a one-token request.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from openprogram import Runtime
from openprogram.events import Event, ProviderResponseReceived, TokensConsumed

from .._helpers import WEATHER, drive, request
from .._server import Reply, WireServer, sse
from ._llama import answered, completion, provider, role_chunk, timings

# model_requests: fake llama.cpp servers on 127.0.0.1, talked to on purpose (tests/conftest.py)
pytestmark = [pytest.mark.usefixtures("clean_env"), pytest.mark.model_requests]

PARIS = {"name": "get_weather", "arguments": {"city": "Paris"}}
ROME = {"name": "get_weather", "arguments": {"city": "Rome"}}
LOOP = "Here is the plan. " + "Paris: sunny, 21 C " * 60


def streamed(pieces: list[str], prompt: int, cached: int, *, sent: bool = True) -> Reply:
    """``pieces`` one chunk (one token) each, with per-token ``timings`` if ``sent``;
    then the end of the reply with its usage, as llama.cpp ends a stream."""
    chunks = [sse(role_chunk())]
    for n, piece in enumerate(pieces, start=1):
        chunk: dict[str, Any] = {
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": {"content": piece}}],
        }
        if sent:
            chunk["timings"] = timings(n, prompt=prompt, cached=cached)
        chunks.append(sse(chunk))
    end = {
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": len(pieces)},
        "timings": timings(len(pieces), prompt=prompt, cached=cached),
    }
    return Reply(chunks=[*chunks, sse(end, "[DONE]")])


def tokens_of(events: list[Event]) -> list[tuple[dict[str, int], int]]:
    """Each model call's ``tokens`` and its cached tokens, from the run's events."""
    replies = [dict(e.tokens) for e in events if isinstance(e, ProviderResponseReceived)]
    cached = [e.cached_tokens for e in events if isinstance(e, TokensConsumed)]
    return list(zip(replies, cached, strict=True))


def figures(tokens: int, generated: int) -> dict[str, int]:
    return {"input": tokens, "output": generated, "total": tokens + generated}


# -- the server sends per-token timings (llama.cpp, asked) ------------------------------------


def test_streamed_requests_ask_for_per_token_timings(wire: WireServer) -> None:
    wire.push(streamed(["Hi."], 5, 0), Reply(body=completion("Hi.")))
    drive(provider(wire, stream=True), request("Hi"))
    drive(provider(wire, stream=False), request("Hi"))
    streaming, whole = (seen.json for seen in wire.requests)
    assert streaming["timings_per_token"] is True
    assert "timings_per_token" not in whole  # a whole reply carries its usage


def test_a_calls_reply_cut_at_a_repeat_reports_the_tokens_read(wire: WireServer) -> None:
    # [Paris, Rome, Paris, ...: the third call repeats the first, so reading stops there.
    text = json.dumps([PARIS, ROME, PARIS, ROME, PARIS])
    pieces = [text[i : i + 8] for i in range(0, len(text), 8)]
    wire.push(streamed(pieces, prompt=120, cached=100), Reply(body=completion("Sunny.")))
    seen: list[Event] = []
    rt = Runtime(provider(wire, stream=True), observers=[seen.append])
    ran: list[str] = []

    def get_weather(city: str) -> str:
        """Current weather for a city."""
        ran.append(city)
        return "sunny"

    assert rt.exec("Paris and Rome?", tools=[get_weather]) == "Sunny."
    assert ran == ["Paris", "Rome"]
    read = text.index("Paris", text.index("Rome")) // 8 + 1  # chunks up to the repeat's end
    (first, cached), _ = tokens_of(seen)
    assert 0 < first["output"] < len(pieces)
    assert first["output"] >= read
    assert first["input"] == 120
    assert cached == 100


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_a_repeat_asked_again_counts_both_replies(wire: WireServer, stream: bool) -> None:
    repeat = json.dumps([PARIS, PARIS])
    again = streamed([repeat[:20], repeat[20:]], prompt=90, cached=80)
    body = completion(repeat)
    body["usage"] = {"prompt_tokens": 90, "completion_tokens": 2}
    wire.push(again if stream else Reply(body=body), Reply(body=completion("Sunny in Paris.")))
    history = answered("Paris?", "get_weather", {"city": "Paris"}, "sunny")
    run = drive(provider(wire, stream=stream), request(*history, tools=(WEATHER,)))
    assert run.message.text == "Sunny in Paris."
    usage = run.message.usage
    # The re-ask's own (10 in / 5 out, see completion()) plus the repeat's: 90 in, 2 out.
    assert (usage.input_tokens, usage.output_tokens) == (100, 7)
    assert "chat_template_kwargs" not in wire.requests[1].json  # it was asked again


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_an_answer_cut_in_a_loop_reports_its_tokens(wire: WireServer, stream: bool) -> None:
    pieces = [LOOP[i : i + 7] for i in range(0, len(LOOP), 7)]
    body = completion(LOOP)
    body["usage"] = {"prompt_tokens": 33, "completion_tokens": len(pieces)}
    wire.push(streamed(pieces, prompt=33, cached=0) if stream else Reply(body=body))
    run = drive(provider(wire, stream=stream), request("Plan a weekend in Paris."))
    message = run.message
    assert message.stop_reason == "length"
    assert message.text == "Here is the plan. Paris: sunny, 21 C"
    assert message.usage.input_tokens == 33
    if stream:  # stopped reading once the loop showed: fewer tokens than the whole answer
        assert 0 < message.usage.output_tokens < len(pieces)
    else:  # the whole answer was generated, and is reported
        assert message.usage.output_tokens == len(pieces)


# -- a server that sends no per-token timings ----------------------------------------------


def test_without_timings_chunks_are_counted_and_the_prompt_measured(
    wire: WireServer,
) -> None:
    pieces = [LOOP[i : i + 7] for i in range(0, len(LOOP), 7)]
    measured = completion("x")
    measured["usage"] = {"prompt_tokens": 47, "completion_tokens": 1}
    measured["timings"] = {"cache_n": 46, "prompt_n": 1, "predicted_n": 1}
    wire.push(streamed(pieces, prompt=47, cached=0, sent=False), Reply(body=measured))
    run = drive(provider(wire, stream=True), request("Plan a weekend in Paris."))
    message = run.message
    assert message.stop_reason == "length"
    usage = message.usage
    assert 0 < usage.output_tokens < len(pieces)  # the text chunks read, one token each
    assert (usage.input_tokens, usage.cached_tokens) == (47, 46)
    real, measure = (seen.json for seen in wire.requests)
    assert measure["max_tokens"] == 1
    assert measure.get("stream", False) is False
    assert "grammar" not in measure
    assert measure["messages"] == real["messages"]  # the same prompt, found in the cache


def test_a_failed_measurement_is_logged(wire: WireServer, caplog: pytest.LogCaptureFixture) -> None:
    pieces = [LOOP[i : i + 7] for i in range(0, len(LOOP), 7)]
    wire.push(
        streamed(pieces, prompt=47, cached=0, sent=False),
        Reply(500, {"error": {"message": "busy"}}),
    )
    with caplog.at_level(logging.WARNING, logger="openprogram.providers.local"):
        run = drive(provider(wire, stream=True), request("Plan a weekend in Paris."))
    assert run.message.usage.output_tokens > 0
    (record,) = [r for r in caplog.records if "prompt tokens are unknown" in r.getMessage()]
    assert record.levelname == "WARNING"
