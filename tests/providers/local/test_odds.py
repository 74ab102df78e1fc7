"""The call-share probe: a model unsure it should call a function is asked for an answer.

Under ``tool_choice="auto"`` with functions offered, the local provider first
sends the reply's own request body for one token, with its top probabilities
and no grammar, and sums the share of tokens that open a call (``[``, a code
fence, ``{``). Below ``call_threshold`` the real request leaves the function
list out and allows text only. These tests script the probe's answer the way
llama.cpp's server writes ``logprobs`` (``choices[0].logprobs.content``).
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from typing import Any

import httpx
import pytest

from openprogram import Runtime
from openprogram.exceptions import UserError
from openprogram.providers.base import ResponseFormat, ToolChoice
from openprogram.providers.local import LOCAL_MODEL, PROFILES, LocalProvider

from .._helpers import WEATHER, drive, fail, request
from .._server import Reply, WireServer
from ._gbnf import accepts
from ._llama import completion, names, provider, text_stream

# model_requests: fake llama.cpp servers on 127.0.0.1, talked to on purpose (tests/conftest.py)
pytestmark = [pytest.mark.usefixtures("clean_env"), pytest.mark.model_requests]

PROBE_FIELDS = ("stream", "stream_options", "max_tokens", "logprobs", "top_logprobs", "grammar")
"""The fields in which the probe's body may differ from the reply's."""

CALL_PARIS = '[{"name": "get_weather", "arguments": {"city": "Paris"}}]'


def probe(*tops: tuple[str, float], listed: bool = True) -> Reply:
    """A one-token reply whose first token had these (token, probability) candidates.

    ``listed=False``: the candidates are left out (an empty ``top_logprobs``).
    """
    body = completion(tops[0][0])
    candidates = [{"token": t, "logprob": math.log(p), "bytes": None} for t, p in tops]
    shown = candidates if listed else []
    body["choices"][0]["logprobs"] = {"content": [{**candidates[0], "top_logprobs": shown}]}
    body["choices"][0]["finish_reason"] = "length"
    return Reply(body=body)


LOW = probe(("The", 0.7), ("[", 0.2), ("I", 0.05))  # share 0.2
HIGH = probe(("[", 0.45), (" ```", 0.35), ("The", 0.15))  # share 0.8, one opener after a space


def get_weather(city: str) -> str:
    """Current weather for a city.

    Args:
        city: City name.
    """
    return f"sunny in {city}"


def answer(text: str, stream: bool) -> Reply:
    return text_stream(text) if stream else Reply(body=completion(text))


def without(body: dict[str, Any], fields: tuple[str, ...]) -> dict[str, Any]:
    return {k: v for k, v in body.items() if k not in fields}


# -- steering ------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_a_low_call_share_asks_for_a_plain_answer(wire: WireServer, stream: bool) -> None:
    wire.push(LOW, answer("I cannot tell jokes with these tools.", stream))
    rt = Runtime(provider(wire, stream=stream, call_threshold=0.6))
    result = rt.exec("Tell me a joke about cats.", tools=[get_weather])
    assert result == "I cannot tell jokes with these tools."
    assert len(wire.requests) == 2
    sent_probe, real = (seen.json for seen in wire.requests)
    # The probe: one token, its top 20 candidates, no grammar, never streamed.
    assert sent_probe["max_tokens"] == 1
    assert sent_probe["logprobs"] is True
    assert sent_probe["top_logprobs"] == 20
    assert sent_probe["stream"] is False
    assert "grammar" not in sent_probe
    assert "stream_options" not in sent_probe
    assert names(sent_probe) == ["get_weather"]  # asked with the functions listed
    assert sent_probe["messages"] == real["messages"]
    # The real request: no function list, a text-only grammar.
    assert "chat_template_kwargs" not in real
    assert "n_cache_reuse" not in sent_probe  # its prompt is the cached prefix
    assert (
        real["n_cache_reuse"] == PROFILES[LOCAL_MODEL].reuse_chunk
    )  # the probe's prompt, shifted into place
    assert real.get("stream", False) is stream
    assert "max_tokens" not in real
    assert "logprobs" not in real
    assert accepts(real["grammar"], "I cannot tell jokes with these tools.")
    assert not accepts(real["grammar"], CALL_PARIS)
    assert not accepts(real["grammar"], "```json\n" + CALL_PARIS + "\n```")


def test_a_high_call_share_leaves_the_functions_listed_and_the_call_runs(
    wire: WireServer,
) -> None:
    call = CALL_PARIS.replace("get_weather", "weather")
    wire.push(HIGH, Reply(body=completion(call)), LOW, Reply(body=completion("Sunny.")))
    ran: list[str] = []

    def weather(city: str) -> str:
        """Current weather for a city."""
        ran.append(city)
        return f"sunny in {city}"

    rt = Runtime(provider(wire, call_threshold=0.6))
    assert rt.exec("What's the weather in Paris?", tools=[weather]) == "Sunny."
    assert ran == ["Paris"]
    bodies = [seen.json for seen in wire.requests]
    assert len(bodies) == 4  # a probe before each of the two replies
    first_probe, first, second_probe, second = bodies
    assert names(first) == ["weather"]
    assert accepts(first["grammar"], call)
    # The probe is the reply's own request, asked for one token.
    assert without(first_probe, PROBE_FIELDS) == without(first, PROBE_FIELDS)
    # After the result, the low share asked for the answer without the list.
    assert second_probe["messages"] == second["messages"]
    assert names(second_probe) == ["weather"]
    assert "chat_template_kwargs" not in second


def test_the_share_is_compared_with_the_threshold_given(wire: WireServer) -> None:
    # 0.8 is below a threshold of 0.9: the same probe answer now steers.
    wire.push(HIGH, Reply(body=completion("Paris is sunny, I think.")))
    run = drive(provider(wire, call_threshold=0.9), request("Weather?", tools=(WEATHER,)))
    assert run.message.text == "Paris is sunny, I think."
    assert "chat_template_kwargs" not in wire.requests[1].json


# -- when there is no probe ----------------------------------------------------------------


def forecast_format() -> ResponseFormat:
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
        "additionalProperties": False,
    }
    return ResponseFormat(name="forecast", schema=schema)


@pytest.mark.parametrize(
    ("choice", "reply"),
    [
        ("required", CALL_PARIS),
        ({"type": "function", "name": "get_weather"}, CALL_PARIS),
    ],
    ids=["required", "forced"],
)
def test_no_probe_when_a_call_is_forced(wire: WireServer, choice: ToolChoice, reply: str) -> None:
    wire.push(Reply(body=completion(reply)))
    req = request("Weather?", tools=(WEATHER,), tool_choice=choice)
    run = drive(provider(wire, call_threshold=0.6), req)
    assert [c.name for c in run.message.tool_calls] == ["get_weather"]
    assert len(wire.requests) == 1
    assert "logprobs" not in wire.requests[0].json


def test_no_probe_for_structured_output(wire: WireServer) -> None:
    wire.push(Reply(body=completion('{"city": "Paris"}')))
    req = request("Which city?", tools=(WEATHER,), response_format=forecast_format())
    run = drive(provider(wire, call_threshold=0.6), req)
    assert json.loads(run.message.text) == {"city": "Paris"}
    assert len(wire.requests) == 1
    assert "logprobs" not in wire.requests[0].json


def test_no_probe_in_a_decision(wire: WireServer) -> None:
    wire.push(Reply(body=completion('{"call": "reply"}')))
    rt = Runtime(provider(wire, call_threshold=0.6))
    choices = {"reply": ("replied", "Answer the customer."), "escalate": ("escalated", "Escalate.")}
    result = rt.exec("The customer says thanks.", tools=[get_weather], choices=choices)
    assert result == "replied"
    assert len(wire.requests) == 1
    assert "logprobs" not in wire.requests[0].json


def test_no_probe_without_tools(wire: WireServer) -> None:
    wire.push(Reply(body=completion("Hello!")))
    assert Runtime(provider(wire, call_threshold=0.6)).exec("Say hello.") == "Hello!"
    assert len(wire.requests) == 1
    assert "logprobs" not in wire.requests[0].json


@pytest.mark.parametrize("options", [{"call_threshold": None}, {}])
def test_no_probe_when_off_which_is_the_default(wire: WireServer, options: dict[str, Any]) -> None:
    wire.push(Reply(body=completion(CALL_PARIS)), HIGH, Reply(body=completion(CALL_PARIS)))
    off = drive(provider(wire, **options), request("Weather?", tools=(WEATHER,)))
    assert [c.name for c in off.message.tool_calls] == ["get_weather"]
    assert len(wire.requests) == 1
    assert "logprobs" not in wire.requests[0].json
    # The same request with a threshold is probed first.
    drive(provider(wire, call_threshold=0.6), request("Weather?", tools=(WEATHER,)))
    assert [seen.json.get("logprobs") for seen in wire.requests] == [None, True, None]


# -- a failed probe ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "failed",
    [
        Reply(500, {"error": {"message": "probe failed"}}),
        Reply(body=completion("The")),  # no logprobs (a server that does not send them)
        Reply(body="not json"),
        Reply(body={"choices": []}),
        probe(("[", 0.9), listed=False),  # no candidates: nothing says the model is unsure
    ],
    ids=["http-500", "no-logprobs", "not-json", "no-choices", "no-candidates"],
)
def test_a_failed_probe_leaves_the_request_unchanged(wire: WireServer, failed: Reply) -> None:
    wire.push(failed, Reply(body=completion(CALL_PARIS)))
    run = drive(provider(wire, call_threshold=0.6), request("Weather?", tools=(WEATHER,)))
    assert [c.name for c in run.message.tool_calls] == ["get_weather"]
    assert run.retries == []  # the probe's failure is not the reply's
    sent_probe, real = (seen.json for seen in wire.requests)
    assert sent_probe["logprobs"] is True
    assert names(real) == ["get_weather"]
    assert accepts(real["grammar"], CALL_PARIS)


# -- options -------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [1.5, -0.1, True, "high", "auto"])
def test_a_bad_call_threshold_is_refused(value: Any) -> None:
    with pytest.raises(UserError, match="call_threshold"):
        LocalProvider(base_url="http://127.0.0.1:9/v1", call_threshold=value)


def test_the_api_key_is_sent_on_the_probe_too(wire: WireServer) -> None:
    wire.push(LOW, Reply(body=completion("No function needed.")))
    p = provider(wire, call_threshold=0.6, api_key="sk-local")
    drive(p, request("Hi", tools=(WEATHER,)))
    assert [seen.headers.get("authorization") for seen in wire.requests] == [
        "Bearer sk-local",
        "Bearer sk-local",
    ]
    assert wire.requests[0].json["logprobs"] is True


# -- the probe is a model call like the reply's own --------------------------------------------


def test_the_probe_tokens_count_with_the_reply(wire: WireServer) -> None:
    probed = probe(("[", 0.9), ("The", 0.1))
    assert isinstance(probed.body, dict)
    probed.body["usage"] = {"prompt_tokens": 42, "completion_tokens": 1, "total_tokens": 43}
    probed.body["timings"] = {"cache_n": 40, "prompt_n": 2, "predicted_n": 1}
    wire.push(probed, Reply(body=completion(CALL_PARIS)), HIGH, Reply(body=completion("Sunny.")))
    seen: list[Any] = []
    rt = Runtime(provider(wire, call_threshold=0.6), observers=[seen.append])
    assert rt.exec("What's the weather in Paris?", tools=[get_weather]) == "Sunny."
    replies = [e.tokens for e in seen if type(e).__name__ == "ProviderResponseReceived"]
    consumed = [e for e in seen if type(e).__name__ == "TokensConsumed"]
    # Each reply (10 in / 5 out, see completion()) plus its probe: 42 in / 1 out, 40 of
    # them cached, then the second probe's 10 in / 5 out (the same helper's figures).
    assert replies == [
        {"input": 52, "output": 6, "total": 58},
        {"input": 20, "output": 10, "total": 30},
    ]
    assert (consumed[0].input_tokens, consumed[0].cached_tokens) == (52, 40)
    assert rt.last_run is not None
    assert rt.last_run.usage.input_tokens == 72


def test_a_failed_probe_costs_nothing(wire: WireServer) -> None:
    wire.push(Reply(500, {"error": {"message": "probe failed"}}), Reply(body=completion("Hi.")))
    run = drive(provider(wire, call_threshold=0.6), request("Hi", tools=(WEATHER,)))
    usage = run.message.usage
    assert (usage.input_tokens, usage.output_tokens) == (10, 5)  # the reply's own


def test_the_probe_is_sent_with_the_providers_read_timeout(wire: WireServer) -> None:
    timeouts: list[dict[str, Any]] = []

    async def note(sent: httpx.Request) -> None:
        timeouts.append(dict(sent.extensions["timeout"]))

    async def main() -> None:
        async with httpx.AsyncClient(event_hooks={"request": [note]}) as client:
            p = provider(wire, call_threshold=0.6, timeout=7.0, client=client)
            async for _ in p.stream(request("Weather?", tools=(WEATHER,))):
                pass

    wire.push(HIGH, Reply(body=completion(CALL_PARIS)))
    asyncio.run(main())
    assert [seen.json.get("logprobs") for seen in wire.requests] == [True, None]
    assert [t["read"] for t in timeouts] == [7.0, 7.0]  # the probe's, then the reply's


def test_a_probe_slower_than_the_timeout_leaves_the_request_unchanged(wire: WireServer) -> None:
    # The probe's answer would steer (LOW), but it comes after the provider's read timeout:
    # the reply is then asked for as if there were no probe, functions listed.
    wire.push(
        Reply(body=LOW.body, delay_s=10.0),  # interrupted when the server closes
        Reply(body=completion(CALL_PARIS)),
    )
    run = drive(provider(wire, call_threshold=0.6, timeout=2.0), request("Hi", tools=(WEATHER,)))
    assert [c.name for c in run.message.tool_calls] == ["get_weather"]
    sent_probe, real = (seen.json for seen in wire.requests)
    assert sent_probe["logprobs"] is True
    assert names(real) == ["get_weather"]


def test_no_probe_is_sent_past_the_deadline(wire: WireServer) -> None:
    wire.push(LOW, Reply(body=completion("Hi.")))
    past = time.monotonic() - 1.0
    run = fail(provider(wire, call_threshold=0.6), request("Hi", tools=(WEATHER,), deadline=past))
    assert run.failure.reason == "timeout"
    # Neither the probe nor the reply went out (only the look-up of the model's name
    # for the error message did).
    assert [seen.path for seen in wire.requests if seen.method == "POST"] == []


def test_the_probe_carries_the_extra_body_like_the_reply(wire: WireServer) -> None:
    wire.push(HIGH, Reply(body=completion(CALL_PARIS)))
    extra = {"temperature": 0.3, "max_tokens": 64, "chat_template_kwargs": {"style": "terse"}}
    sent = request("Weather in Paris?", tools=(WEATHER,))
    drive(provider(wire, call_threshold=0.6, extra_body=extra), sent)
    probe_sent, reply = (seen.json for seen in wire.requests)
    assert probe_sent["temperature"] == reply["temperature"] == 0.3
    assert probe_sent["chat_template_kwargs"] == reply["chat_template_kwargs"]
    assert reply["chat_template_kwargs"]["style"] == "terse"
    assert probe_sent["max_tokens"] == 1  # the probe's own fields win
    assert without(probe_sent, PROBE_FIELDS) == without(reply, PROBE_FIELDS)
