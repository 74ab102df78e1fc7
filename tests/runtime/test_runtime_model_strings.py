"""Result texts built from model-supplied strings are bounded, however long the strings."""

from __future__ import annotations

import pytest

from openprogram import Runtime, ToolCall, function
from openprogram.runtime import run_tools_sync
from openprogram.testing import ScriptedProvider, call
from openprogram.tools import DEFAULT_MAX_RESULT_CHARS

HUGE = "n" * 1_000_000


@function(register_globally=False)
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def test_an_unknown_megabyte_name_gets_a_short_refusal() -> None:
    model = ScriptedProvider([call(HUGE, a=1), "done"])
    Runtime(model).exec("go", tools=[add])
    refusal = model.requests[1].messages[-1]
    assert refusal.is_error
    assert "not available" in refusal.content
    assert "Available tools: add" in refusal.content
    assert len(refusal.content) <= 1_000


@pytest.mark.parametrize(
    "arguments",
    [
        {HUGE: 1, "a": 1, "b": 2},  # one huge unexpected key
        {f"k{i}": i for i in range(50_000)},  # a great many unexpected keys
    ],
)
def test_validation_errors_on_model_strings_stay_within_the_result_cap(
    arguments: dict[str, int],
) -> None:
    [result] = run_tools_sync([ToolCall("c1", "add", arguments)], [add])
    assert result.is_error
    assert len(result.content) <= DEFAULT_MAX_RESULT_CHARS


def test_a_malformed_call_to_a_huge_name_is_bounded() -> None:
    [result] = run_tools_sync([ToolCall("c1", HUGE, {}, arguments_error="x" * 1_000_000)], [add])
    assert len(result.content) <= 1_000


@function(register_globally=False, defer=True)
def stock_price(ticker: str) -> str:
    """Latest stock price for a ticker symbol."""
    return f"{ticker}: 42.0"


def test_a_megabyte_tool_search_query_gets_a_short_answer() -> None:
    model = ScriptedProvider([call("tool_search", query=HUGE), "done"])
    Runtime(model).exec("go", tools=[stock_price])
    answer = model.requests[1].messages[-1]
    assert answer.is_error
    assert "stock_price" in answer.content  # still names what can be loaded
    assert len(answer.content) <= 1_000


@pytest.mark.parametrize(
    "reply",
    [
        '{"call": "' + HUGE + '"}',  # an unknown option with a megabyte name
        '{"call": "wait", "args": ["' + HUGE + '"]}',  # args of the wrong type
        '{"call": "wait", "args": {"' + HUGE + '": 1}}',  # an argument a value does not take
    ],
)
def test_a_bad_pick_built_from_megabyte_strings_is_reasked_briefly(reply: str) -> None:
    model = ScriptedProvider([reply, '{"call": "wait"}'])
    assert Runtime(model).exec("go", tools=[], choices={"wait": "waiting"}) == "waiting"
    reask = model.requests[1].messages[-1]
    assert "could not be used" in reask.content
    assert len(reask.content) <= 2_500
