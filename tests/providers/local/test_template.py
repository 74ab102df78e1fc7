"""The shipped chat template's logic, rendered with Jinja2 (llama.cpp runs the same text)."""

from __future__ import annotations

from typing import Any

import pytest

from openprogram.providers.local import LOCAL_MODEL, PROFILES

jinja2 = pytest.importorskip("jinja2")

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather for a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
ASK = {"role": "user", "content": "Weather in Paris?"}
CALL = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {
            "id": "c1",
            "type": "function",
            "function": {"name": "get_weather", "arguments": {"city": "Paris"}},
        },
        {
            "id": "c2",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Rome"}'},
        },
    ],
}
RESULTS = [
    {"role": "tool", "tool_call_id": "c1", "content": "Sunny, 21 C"},
    {"role": "tool", "tool_call_id": "c2", "content": "Rain, 15 C"},
]


def render(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = TOOLS) -> str:
    env = jinja2.Environment()
    return str(
        env.from_string(PROFILES[LOCAL_MODEL].chat_template()).render(
            messages=messages, tools=tools, add_generation_prompt=True
        )
    )


def test_tools_are_listed_with_the_bare_json_call_instruction() -> None:
    prompt = render([ASK])
    assert prompt.startswith("<|im_start|>system\nYou are a helpful assistant.")
    assert "## get_weather\nCurrent weather for a city.\nArguments: {" in prompt
    assert '{"name": "<function name>", "arguments": {"<argument>": <value>}}' in prompt
    assert prompt.endswith("<|im_start|>user\nWeather in Paris?<|im_end|>\n<|im_start|>assistant\n")


def test_a_system_message_replaces_the_default() -> None:
    prompt = render([{"role": "system", "content": "Be brief."}, ASK])
    assert prompt.startswith("<|im_start|>system\nBe brief.\n\n# Functions")
    assert "helpful assistant" not in prompt


def test_no_tools_means_no_function_section() -> None:
    assert "# Functions" not in render([ASK], tools=None)


def test_calls_are_one_json_list_whether_arguments_are_objects_or_strings() -> None:
    prompt = render([ASK, CALL, *RESULTS, {"role": "user", "content": "And Oslo?"}])
    assert (
        '<|im_start|>assistant\n[{"name": "get_weather", "arguments": {"city": "Paris"}}, '
        '{"name": "get_weather", "arguments": {"city": "Rome"}}]<|im_end|>'
    ) in prompt
    assert "<tool_call>" not in prompt


def test_results_come_back_as_one_user_turn_asking_for_the_next_call_or_the_answer() -> None:
    prompt = render([ASK, CALL, *RESULTS])
    assert prompt.endswith(
        "<|im_start|>user\nFunction results:\nSunny, 21 C\nRain, 15 C\n\n"
        "If my request needs another function call, reply with the call; otherwise use these "
        "results to write a complete answer to my request: Weather in Paris?<|im_end|>\n"
        "<|im_start|>assistant\n"
    )


def test_without_functions_a_result_asks_for_the_answer() -> None:
    prompt = render([ASK, CALL, *RESULTS], tools=None)
    assert "# Functions" not in prompt
    assert prompt.endswith(
        "Use these results to write a complete answer to my request: Weather in Paris?"
        "<|im_end|>\n<|im_start|>assistant\n"
    )


def test_the_function_list_stays_on_every_turn_so_the_prefix_is_stable() -> None:
    first = render([ASK])
    later = render([ASK, CALL, *RESULTS])
    head = first[: first.index("<|im_start|>user")]
    assert "# Functions" in head
    assert later.startswith(first.removesuffix("<|im_start|>assistant\n"))


def test_functions_can_come_as_a_template_argument() -> None:
    env = jinja2.Environment()
    functions = [t["function"] for t in TOOLS]
    prompt = env.from_string(PROFILES[LOCAL_MODEL].chat_template()).render(
        messages=[ASK], functions=functions, add_generation_prompt=True
    )
    assert prompt == render([ASK])
