"""Every read is bounded: error bodies, SSE events, replies of the wrong kind.

- An error body is read up to a cap (64 KiB plus a margin), never whole: a
  100 MB error body costs a few hundred KiB of memory, not 100 MB.
- An SSE event larger than ``MAX_EVENT_CHARS`` raises a typed ``LLMError``
  naming the limit, whether or not its lines end; decoding stays linear.
- A plain JSON reply to a streaming request (some OpenAI-compatible servers
  ignore ``stream: true``) is read as the non-streamed response.
"""

from __future__ import annotations

import gc
import tracemalloc

import pytest

from openprogram import LLMError, Runtime
from openprogram.providers import OpenAIProvider
from openprogram.providers._http_provider import DEFAULT_TOTAL_TIMEOUT_S
from openprogram.providers._sse import MAX_EVENT_CHARS, SSEDecoder

from ._helpers import drive, fail, request
from ._server import Reply, WireServer

pytestmark = pytest.mark.usefixtures("clean_env")

MB = 1024 * 1024


def _provider(url: str, *, stream: bool = True, retries: int = 0) -> OpenAIProvider:
    return OpenAIProvider(
        base_url=f"{url}/v1",
        api_key="k",
        model="m",
        stream=stream,
        max_retries=retries,
        backoff_base_s=0.001,
    )


def test_a_100_mb_error_body_is_not_read_whole(wire: WireServer) -> None:
    piece = b"x" * MB
    wire.push(Reply(500, chunks=[piece] * 100, content_type="text/plain"))
    gc.collect()
    tracemalloc.start()
    try:
        err = fail(_provider(wire.url), request()).failure
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert err.http_status == 500
    assert "x" * 100 in err.message
    assert peak < 8 * MB, f"reading the error took {peak / MB:.1f} MiB"


def test_each_attempt_reads_only_the_head_of_the_error(wire: WireServer) -> None:
    piece = b"y" * MB
    for _ in range(3):
        wire.push(Reply(503, chunks=[piece] * 100, content_type="text/plain"))
    gc.collect()
    tracemalloc.start()
    try:
        err = fail(_provider(wire.url, retries=2), request()).failure
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert err.attempts == 3
    assert peak < 8 * MB


# -- SSE events ----------------------------------------------------------------------------


def test_an_event_over_the_cap_without_line_ends_raises_a_typed_error(wire: WireServer) -> None:
    piece = b"a" * MB
    wire.push(Reply(chunks=[b"data: ", *([piece] * (MAX_EVENT_CHARS // MB + 2))]))
    err = fail(_provider(wire.url), request()).failure
    assert err.reason == "server"
    assert not err.retryable
    assert "event" in err.message
    assert f"{MAX_EVENT_CHARS:,}" in err.message  # says what was too big, and the limit


def test_an_event_over_the_cap_in_many_data_lines_raises(wire: WireServer) -> None:
    line = b"data: " + b"b" * (MB - 10) + b"\n"
    wire.push(Reply(chunks=[line] * (MAX_EVENT_CHARS // MB + 2)))
    err = fail(_provider(wire.url), request()).failure
    assert f"{MAX_EVENT_CHARS:,}" in err.message


def test_a_long_line_in_small_chunks_decodes_whole() -> None:
    decoder = SSEDecoder()
    payload = "é" * 300_000  # two bytes each: chunks split characters too
    data = f"data: {payload}\n\n".encode()
    events = []
    for i in range(0, len(data), 4093):
        events.extend(decoder.feed(data[i : i + 4093]))
    assert [e.data for e in events] == [payload]


def test_the_decoder_keeps_working_after_a_big_event() -> None:
    decoder = SSEDecoder()
    big = "c" * (MAX_EVENT_CHARS // 2)
    events = decoder.feed(f"data: {big}\r".encode()) + decoder.feed(b"\ndata: next\n\n")
    assert [len(e.data) for e in events] == [len(big) + 1 + len("next")]  # one event, 2 lines


# -- a JSON reply to a streaming request ---------------------------------------------------


def test_a_json_reply_to_a_streaming_request_is_read_as_the_response(wire: WireServer) -> None:
    body = {
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "plain"},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1},
    }
    wire.push(Reply(200, body))
    run = drive(_provider(wire.url, retries=4), request())
    assert run.message.text == "plain"
    assert run.text == "plain"
    assert len(run.attempts) == 1
    assert wire.requests[0].json["stream"] is True


def test_a_json_error_object_with_status_200_on_a_stream_is_classified(wire: WireServer) -> None:
    wire.push(Reply(200, {"error": {"message": "model not loaded", "type": "server_error"}}))
    err = fail(_provider(wire.url, retries=0), request()).failure
    assert "model not loaded" in err.message
    assert "ended before any content" not in err.message


# -- a total deadline when the exec gives none ---------------------------------------------


def _trickle() -> Reply:
    """A reply that sends one byte every 50 ms: each read is quick, the whole never ends."""
    body = b'data: {"choices": [{"index": 0, "delta": {"content": "' + b"z" * 10_000
    return Reply(chunks=[bytes([b]) for b in body], chunk_delay_s=0.05)


def test_a_trickling_server_is_cut_off_by_the_total_timeout(wire: WireServer) -> None:
    wire.push(_trickle())
    provider = OpenAIProvider(
        base_url=f"{wire.url}/v1", api_key="k", model="m", max_retries=0, total_timeout_s=0.5
    )
    err = fail(provider, request()).failure
    assert err.reason == "timeout"
    assert "total_timeout_s=0.5" in err.message


def test_an_exec_without_timeout_s_ends_on_the_provider_total_timeout(wire: WireServer) -> None:
    wire.push(_trickle())
    provider = OpenAIProvider(
        base_url=f"{wire.url}/v1", api_key="k", model="m", max_retries=0, total_timeout_s=0.5
    )
    with pytest.raises(LLMError) as info:
        Runtime(provider).exec("hi", tools=[])
    assert info.value.reason == "timeout"


def test_the_default_total_timeout_is_finite_and_can_be_turned_off() -> None:
    assert OpenAIProvider().total_timeout_s == DEFAULT_TOTAL_TIMEOUT_S == 900.0
    assert OpenAIProvider(total_timeout_s=None).total_timeout_s is None
    with pytest.raises(ValueError, match="total_timeout_s"):
        OpenAIProvider(total_timeout_s=0)


def test_sse_sent_under_a_json_content_type_is_still_read_as_the_stream(
    wire: WireServer,
) -> None:
    body = (
        b'data: {"choices": [{"index": 0, "delta": {"content": "mis"}}]}\n\n'
        b'data: {"choices": [{"index": 0, "delta": {"content": "labelled"}, '
        b'"finish_reason": "stop"}]}\n\ndata: [DONE]\n\n'
    )
    wire.push(Reply(chunks=[body], content_type="application/json"))
    run = drive(_provider(wire.url), request())
    assert run.message.text == "mislabelled"
