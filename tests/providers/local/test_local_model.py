"""End to end against the real embedded model (slow; needs ``openprogram-ai[local]``).

Assertions are semantic (which tool, which city), never exact text. Every
request gets a generous timeout: on a busy 2-core machine one can take 30 s.
"""

from __future__ import annotations

import json
import os
import signal
import time

import httpx
import pytest

from openprogram.messages import ToolResultMessage
from openprogram.providers.base import ResponseFormat
from openprogram.providers.local import (
    LocalProvider,
    ensure_server,
    local_available,
    stop_server,
)
from openprogram.providers.local._embedded import default_supervisor, ensure_weights
from openprogram.providers.local._profile import FAST_MODEL, QWEN_CODER_05B_Q4_0
from openprogram.runtime import Runtime

from .._helpers import ADD, WEATHER, drive, request

pytestmark = [
    pytest.mark.local_llm,
    pytest.mark.skipif(not local_available(), reason="needs pip install 'openprogram-ai[local]'"),
]

TIMEOUT_S = 300.0


@pytest.fixture(scope="module")
def server() -> str:
    return ensure_server()


def model(stream: bool = True) -> LocalProvider:
    return LocalProvider(stream=stream, timeout=TIMEOUT_S)


def test_the_server_is_healthy_and_reused(server: str) -> None:
    assert server.startswith("http://127.0.0.1:")
    assert httpx.get(server.removesuffix("/v1") + "/health", timeout=30).status_code == 200
    assert ensure_server() == server


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "json"])
def test_a_weather_question_calls_get_weather_for_paris(server: str, stream: bool) -> None:
    run = drive(model(stream), request("What's the weather in Paris?", tools=(WEATHER, ADD)))
    calls = run.message.tool_calls
    assert [c.name for c in calls] == ["get_weather"]
    assert "paris" in str(calls[0].arguments.get("city", "")).lower()


def test_required_calls_the_right_tool_with_the_numbers(server: str) -> None:
    req = request("What is 17 plus 25?", tools=(WEATHER, ADD), tool_choice="required")
    (call,) = drive(model(), req).message.tool_calls
    assert call.name == "add"
    assert {call.arguments.get("a"), call.arguments.get("b")} == {17, 25}


def test_a_forced_tool_is_the_one_called(server: str) -> None:
    req = request(
        "Paris, please.",
        tools=(WEATHER, ADD),
        tool_choice={"type": "function", "name": "get_weather"},
    )
    (call,) = drive(model(), req).message.tool_calls
    assert call.name == "get_weather"


def test_after_a_result_the_model_answers_in_text_using_it(server: str) -> None:
    first = drive(model(), request("What's the weather in Paris?", tools=(WEATHER,))).message
    (call,) = first.tool_calls
    result = ToolResultMessage(call_id=call.id, tool_name=call.name, content="Sunny, 21 C")
    reply = drive(
        model(), request("What's the weather in Paris?", first, result, tools=(WEATHER,))
    ).message
    assert reply.tool_calls == []
    assert "21" in reply.text or "sunny" in reply.text.lower()


def test_an_off_topic_prompt_with_tools_still_gets_an_answer(server: str) -> None:
    # Some of these make the model invent a tool; the provider then asks again without tools.
    for prompt in ("Tell me a joke about cats.", "Translate 'good morning' to French."):
        message = drive(model(), request(prompt, tools=(WEATHER, ADD))).message
        assert message.text.strip() or message.tool_calls


def test_the_runtime_loop_runs_a_tool_and_answers(server: str) -> None:
    seen: list[str] = []

    def get_weather(city: str) -> str:
        """Current weather for a city.

        Args:
            city: City name, e.g. "Paris".
        """
        seen.append(city)
        return f"Sunny, 21 C in {city}"

    rt = Runtime(model())
    answer = rt.exec("What's the weather in Paris?", tools=[get_weather], max_iterations=4)
    assert seen
    assert "paris" in seen[0].lower()
    assert isinstance(answer, str)
    assert answer.strip()


def test_structured_output_is_constrained_to_the_schema(server: str) -> None:
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "country": {"type": "string"}},
        "required": ["city", "country"],
        "additionalProperties": False,
    }
    req = request(
        "Name the capital of France and its country.",
        response_format=ResponseFormat(name="capital", schema=schema),
    )
    answer = json.loads(drive(model(), req).message.text)
    assert set(answer) == {"city", "country"}
    assert "paris" in answer["city"].lower()


def test_a_killed_server_is_restarted_by_the_next_request(server: str) -> None:
    pid = default_supervisor().pid
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    time.sleep(0.5)
    run = drive(model(), request("What's the weather in Paris?", tools=(WEATHER,)))
    assert run.message.tool_calls or run.message.text
    assert default_supervisor().pid not in (None, pid)


@pytest.mark.skipif(not local_available(FAST_MODEL), reason="needs numpy (the 'local' extra)")
def test_the_opt_in_q4_0_copy_comes_out_as_pinned_and_calls_tools() -> None:
    # Made from the real weights on this machine (once per cache): its hash must be the pinned one.
    path = ensure_weights(QWEN_CODER_05B_Q4_0)
    assert QWEN_CODER_05B_Q4_0.faster is not None
    assert path.name == QWEN_CODER_05B_Q4_0.faster.filename
    try:
        fast = LocalProvider(FAST_MODEL, timeout=TIMEOUT_S)
        run = drive(fast, request("What's the weather in Paris?", tools=(WEATHER, ADD)))
        (call,) = run.message.tool_calls
        assert call.name == "get_weather"
        assert "paris" in str(call.arguments.get("city", "")).lower()
    finally:
        stop_server(FAST_MODEL)  # one model on the CPUs at a time
