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
