"""The local provider's side requests are seen like every other request.

Two requests go to the model server beside a reply's own: the call-share probe
(``LocalProvider(call_threshold=...)``, one token read first) and the prompt
measure (one token, for a reply stopped early by a server that sent no token
counts). Each is reported as a ``ProviderRequestSent`` whose ``side_request``
says what it is for, so events, the OpenTelemetry ``chat`` span and the live
view see that traffic; the reply's own requests keep ``side_request=None``.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from openprogram import Runtime
from openprogram.events import (
    Event,
    ProviderError,
    ProviderRequestSent,
    ProviderResponseReceived,
)
from openprogram.otel import OpenTelemetryObserver

from .._server import Reply, WireServer, sse
from ._llama import completion, provider, role_chunk

# model_requests: fake llama.cpp servers on 127.0.0.1, talked to on purpose (tests/conftest.py)
pytestmark = [pytest.mark.usefixtures("clean_env"), pytest.mark.model_requests]

LOOP = "Here is the plan. " + "Paris: sunny, 21 C " * 60


def get_weather(city: str) -> str:
    """Current weather for a city.

    Args:
        city: City name.
    """
    return f"sunny in {city}"


def probe_reply(share: float) -> Reply:
    """A one-token probe answer whose call openers have probability ``share``."""
    body = completion("[")
    tops = [("[", share), ("The", 1 - share)]
    candidates = [{"token": t, "logprob": math.log(p), "bytes": None} for t, p in tops]
    body["choices"][0]["logprobs"] = {"content": [{**candidates[0], "top_logprobs": candidates}]}
    body["choices"][0]["finish_reason"] = "length"
    body["usage"] = {"prompt_tokens": 40, "completion_tokens": 1}
    return Reply(body=body)


def untimed_loop() -> Reply:
    """A streamed answer caught in a loop, with no ``timings``: its prompt gets measured."""
    pieces = [LOOP[i : i + 7] for i in range(0, len(LOOP), 7)]
    chunks = [
        sse({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": p}}]})
        for p in pieces
    ]
    return Reply(chunks=[sse(role_chunk()), *chunks, sse("[DONE]")])


def measured() -> Reply:
    body = completion("x")
    body["usage"] = {"prompt_tokens": 47, "completion_tokens": 1}
    body["timings"] = {"cache_n": 46, "prompt_n": 1, "predicted_n": 1}
    return Reply(body=body)


def sent_and_replied(events: list[Event]) -> list[tuple[str, Any]]:
    """The run's requests and replies in order: ``("sent", side_request)``, ``("reply", ...)``."""
    out: list[tuple[str, Any]] = []
    for event in events:
        if isinstance(event, ProviderRequestSent):
            out.append(("sent", event.side_request))
        elif isinstance(event, ProviderResponseReceived):
            out.append(("reply", event.tool_calls))
    return out


def test_the_call_share_probe_is_a_side_request_sent_before_the_reply(wire: WireServer) -> None:
    wire.push(probe_reply(0.9), Reply(body=completion("Sunny in Paris, I believe.")))
    rt = Runtime(provider(wire, call_threshold=0.6))
    assert rt.exec("Weather in Paris?", tools=[get_weather]) == "Sunny in Paris, I believe."
    assert rt.last_run is not None
    events = list(rt.last_run.events)
    assert sent_and_replied(events) == [("sent", "call_share"), ("sent", None), ("reply", 0)]
    probe, own = rt.last_run.events_of(ProviderRequestSent)
    on_wire = [len(seen.body) for seen in wire.requests]
    assert [probe.prompt_size_bytes, own.prompt_size_bytes] == on_wire
    assert (probe.attempt, own.attempt) == (1, 1)
    assert probe.provider_id == own.provider_id == "local"
    # The probe's tokens are in the reply's usage, as before.
    (reply,) = rt.last_run.events_of(ProviderResponseReceived)
    assert reply.tokens["input"] >= 40


def test_no_side_request_without_the_probe(wire: WireServer) -> None:
    wire.push(Reply(body=completion("Sunny.")))
    rt = Runtime(provider(wire))  # call_threshold=None: the probe is off
    rt.exec("Weather in Paris?", tools=[get_weather])
    assert rt.last_run is not None
    sent = rt.last_run.events_of(ProviderRequestSent)
    assert [e.side_request for e in sent] == [None]
    assert len(wire.requests) == 1


def test_the_prompt_measure_is_a_side_request_before_the_reply_is_reported(
    wire: WireServer,
) -> None:
    wire.push(untimed_loop(), measured())
    rt = Runtime(provider(wire, stream=True))
    rt.exec("Plan a weekend in Paris.", toolset="none")
    assert rt.last_run is not None
    events = list(rt.last_run.events)
    assert sent_and_replied(events) == [("sent", None), ("sent", "prompt_usage"), ("reply", 0)]
    own, measure = rt.last_run.events_of(ProviderRequestSent)
    assert [own.prompt_size_bytes, measure.prompt_size_bytes] == [
        len(seen.body) for seen in wire.requests
    ]
    assert measure.attempt == 1
    (reply,) = rt.last_run.events_of(ProviderResponseReceived)
    assert reply.tokens["input"] == 47  # what the measure found


def test_a_measure_before_a_re_ask_keeps_the_attempts_of_the_reply(wire: WireServer) -> None:
    """A reply cut in a loop whose calls repeat is measured, then asked again: the
    side request sits between the two attempts and does not count as one."""
    repeat = '[{"name": "get_weather", "arguments": {"city": "Paris"}}]'
    looping_calls = Reply(
        chunks=[
            sse(role_chunk()),
            *(
                sse(
                    {
                        "object": "chat.completion.chunk",
                        "choices": [{"index": 0, "delta": {"content": repeat[i : i + 9]}}],
                    }
                )
                for i in range(0, len(repeat), 9)
            ),
            sse("[DONE]"),
        ]
    )
    wire.push(
        Reply(body=completion(repeat)),  # the first call runs
        looping_calls,  # the same call again: stopped, measured, asked again
        measured(),
        Reply(body=completion("Sunny in Paris.")),
    )
    rt = Runtime(provider(wire, stream=True))
    assert rt.exec("Weather in Paris?", tools=[get_weather]) == "Sunny in Paris."
    assert rt.last_run is not None
    events = list(rt.last_run.events)
    second_call = [e for e in events if e.step_id == "s2"]
    sent = [(e.side_request, e.attempt) for e in second_call if isinstance(e, ProviderRequestSent)]
    assert sent == [(None, 1), ("prompt_usage", 1), (None, 2)]
    (asked_again,) = [e for e in second_call if isinstance(e, ProviderError)]
    assert asked_again.retrying
    assert asked_again.attempt == 1


def test_the_chat_span_holds_the_probe_as_a_span_event(wire: WireServer) -> None:
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    observer = OpenTelemetryObserver(tracer_provider)
    wire.push(probe_reply(0.9), Reply(body=completion("Sunny in Paris, I believe.")))
    rt = Runtime(provider(wire, call_threshold=0.6), observers=[observer])
    rt.exec("Weather in Paris?", tools=[get_weather])
    tracer_provider.shutdown()
    (chat,) = [span for span in exporter.get_finished_spans() if span.name.startswith("chat")]
    assert chat.attributes is not None
    probe_size, own_size = (len(seen.body) for seen in wire.requests)
    assert chat.attributes["openprogram.prompt_size_bytes"] == own_size  # the reply's request
    assert chat.attributes["openprogram.attempts"] == 1  # a side request is not a retry
    (side,) = [e for e in chat.events if e.name == "openprogram.provider.side_request"]
    assert side.attributes is not None
    assert side.attributes["openprogram.side_request"] == "call_share"
    assert side.attributes["openprogram.prompt_size_bytes"] == probe_size
    assert chat.start_time is not None
    assert side.timestamp == chat.start_time  # the probe went out first and opened the span
