"""Malformed tool calls off a real wire: the run goes on and the next request is still valid.

A loopback server speaks OpenAI Chat Completions or Anthropic Messages and
streams a reply whose tool calls carry whatever hypothesis draws as raw
argument text (truncated JSON, nesting deeper than the parser's stack,
``NaN``, escaped lone surrogates, non-objects), as names (case variants,
look-alikes, empty) and as ids (repeated, empty). The exec must end with the
model's next answer, and the request that carries the results must be strict,
UTF-8 encoded JSON with exactly one result per call, each id used once.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from providers._server import Reply, Seen, WireServer, sse

from openprogram import LLMError, Runtime
from openprogram.providers import AnthropicProvider, OpenAIProvider

from ._garbage import short_strings
from ._zoo import JOURNAL, echo

pytestmark = pytest.mark.model_requests  # loopback wire servers: real requests on purpose

_VALID = st.builds(
    lambda text: json.dumps({"text": text}), short_strings
)  # json.dumps escapes a lone surrogate as \udXXX, as a model's JSON would
raw_arguments = st.one_of(
    _VALID,
    st.tuples(_VALID, st.integers(0, 30)).map(lambda p: p[0][: p[1]]),  # cut short
    st.integers(1, 20_000).map(lambda n: "[" * n + "]" * n),
    st.integers(1, 20_000).map(lambda n: '{"text": ' * n + '"x"' + "}" * n),
    st.sampled_from(
        [
            '{"text": NaN}',
            '{"text": "a", "n": -Infinity}',
            '{"text": "\\ud800"}',
            '{"\\udc80": 1, "text": "b"}',
            "[]",
            "null",
            '"text"',
            "",
            '{"text": "a"}}',
            "{'text': 'a'}",
        ]
    ),
    st.text(max_size=20),
)
call_names = st.sampled_from(["echo", "echo", "ECHO", "еcho", "echo\u200b", "", "echo "])
call_ids = st.sampled_from(["call_1", "call_1", "", "toolu_1"])
calls = st.lists(st.tuples(call_ids, call_names, raw_arguments), min_size=1, max_size=3)


def _openai(calls: list[tuple[str, str, str]]) -> Reply:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "c",
            "object": "chat.completion.chunk",
            "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    events = []
    for i, (call_id, name, raw) in enumerate(calls):
        opened = {
            "index": i,
            "id": call_id,
            "type": "function",
            "function": {"name": name, "arguments": ""},
        }
        events.append(chunk({"tool_calls": [opened]}))
        events.append(chunk({"tool_calls": [{"index": i, "function": {"arguments": raw}}]}))
    return Reply(chunks=[sse(*events, chunk({}, "tool_calls"), "[DONE]")])


def _openai_text(text: str) -> Reply:
    delta = {
        "id": "c",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": "stop"}],
    }
    return Reply(chunks=[sse(delta, "[DONE]")])


def _anthropic(calls: list[tuple[str, str, str]]) -> Reply:
    def ev(name: str, **data: Any) -> tuple[str, dict[str, Any]]:
        return (name, {"type": name, **data})

    events = [
        ev(
            "message_start",
            message={
                "id": "m",
                "type": "message",
                "role": "assistant",
                "content": [],
                "model": "m",
                "usage": {"input_tokens": 1, "output_tokens": 1},
            },
        )
    ]
    for i, (call_id, name, raw) in enumerate(calls):
        use = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
        events.append(ev("content_block_start", index=i, content_block=use))
        part = {"type": "input_json_delta", "partial_json": raw}
        events.append(ev("content_block_delta", index=i, delta=part))
        events.append(ev("content_block_stop", index=i))
    events.append(
        ev("message_delta", delta={"stop_reason": "tool_use"}, usage={"output_tokens": 1})
    )
    events.append(ev("message_stop"))
    return Reply(chunks=[sse(*events)])


def _anthropic_text(text: str) -> Reply:
    def ev(name: str, **data: Any) -> tuple[str, dict[str, Any]]:
        return (name, {"type": name, **data})

    return Reply(
        chunks=[
            sse(
                ev(
                    "message_start",
                    message={
                        "id": "m",
                        "type": "message",
                        "role": "assistant",
                        "content": [],
                        "model": "m",
                        "usage": {"input_tokens": 1, "output_tokens": 1},
                    },
                ),
                ev("content_block_start", index=0, content_block={"type": "text", "text": ""}),
                ev("content_block_delta", index=0, delta={"type": "text_delta", "text": text}),
                ev("content_block_stop", index=0),
                ev("message_delta", delta={"stop_reason": "end_turn"}, usage={"output_tokens": 1}),
                ev("message_stop"),
            )
        ]
    )


def _strict_json(seen: Seen) -> Any:
    """The request body as a vendor parses it: UTF-8, and no NaN or Infinity."""

    def reject(name: str) -> None:
        raise AssertionError(f"{name} is not JSON, yet it was sent")

    return json.loads(seen.body.decode("utf-8"), parse_constant=reject)


def _is_json_object(raw: str) -> bool:
    def reject(name: str) -> None:
        raise ValueError(name)

    try:
        return isinstance(json.loads(raw, parse_constant=reject), dict)
    except (ValueError, RecursionError):
        return False


def _results_openai(body: Any) -> tuple[list[str], list[str], list[str]]:
    call_ids = [c["id"] for m in body["messages"] for c in m.get("tool_calls") or ()]
    answered = [m["tool_call_id"] for m in body["messages"] if m["role"] == "tool"]
    texts = [m["content"] for m in body["messages"] if m["role"] == "tool"]
    return call_ids, answered, texts


def _results_anthropic(body: Any) -> tuple[list[str], list[str], list[str]]:
    blocks = [b for m in body["messages"] if isinstance(m["content"], list) for b in m["content"]]
    call_ids = [b["id"] for b in blocks if b["type"] == "tool_use"]
    results = [b for b in blocks if b["type"] == "tool_result"]
    texts = [
        r["content"] if isinstance(r["content"], str) else r["content"][0]["text"] for r in results
    ]
    return call_ids, [r["tool_use_id"] for r in results], texts


DIALECTS = {
    "openai": (
        lambda url: OpenAIProvider(base_url=f"{url}/v1", api_key="k", model="m"),
        _openai,
        _openai_text,
        _results_openai,
    ),
    "anthropic": (
        lambda url: AnthropicProvider(base_url=url, api_key="k", model="m"),
        _anthropic,
        _anthropic_text,
        _results_anthropic,
    ),
}


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(drawn=calls)
def test_malformed_calls_off_the_wire_are_answered_and_the_next_request_is_valid(
    dialect: str, drawn: list[tuple[str, str, str]]
) -> None:
    make, reply_with_calls, text_reply, results_of = DIALECTS[dialect]
    JOURNAL.clear()
    with WireServer() as wire:
        wire.push(reply_with_calls(drawn), text_reply("done"))
        assert Runtime(make(wire.url)).exec("go", tools=[echo]) == "done"
        assert len(wire.requests) == 2
        body = _strict_json(wire.requests[1])
    call_ids, answered, texts = results_of(body)
    assert len(call_ids) == len(set(call_ids)) == len(drawn)
    assert answered == call_ids  # one result per call, in call order
    for (_, name, raw), text in zip(drawn, texts, strict=True):
        if name == "echo" and raw.strip() and not _is_json_object(raw):
            # Truncated, too deep, NaN/Infinity, or not an object: answered, never run.
            assert "not a valid JSON object" in text
            assert "again" in text
    for _, args in JOURNAL.entries:
        args["text"].encode("utf-8")  # what ran got valid Unicode


def test_a_lone_surrogate_in_streamed_text_becomes_a_replacement_character() -> None:
    with WireServer() as wire:
        # json.dumps writes the lone surrogate as the escape \ud83d, as a broken model would.
        wire.push(_openai_text("half a pair: \ud83d, then more"))
        events: list[Any] = []
        rt = Runtime(DIALECTS["openai"][0](wire.url), observers=[events.append])
        answer = rt.exec("go", tools=[])
    assert answer == "half a pair: \ufffd, then more"
    assert any(e.kind == "AgentResponseReceived" for e in events)  # hashing it did not fail


def test_an_error_body_nested_too_deeply_is_still_an_llm_error() -> None:
    with WireServer() as wire:
        wire.push(Reply(400, "[" * 50_000 + "]" * 50_000))
        with pytest.raises(LLMError) as caught:
            Runtime(DIALECTS["openai"][0](wire.url)).exec("go", tools=[])
    assert caught.value.http_status == 400
