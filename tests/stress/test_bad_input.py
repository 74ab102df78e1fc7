"""Garbage from the model never crashes the loop, never runs anything off the menu, and is answered.

Hypothesis draws whole replies of broken tool calls (see ``_garbage``) against a
menu drawn from a zoo of every tool form. Invariants:

- exactly one result per call, in call order, answering that call;
- nothing outside the menu runs (a forbidden tool is registered but never
  offered; case variants and look-alikes of offered names are not them);
- what runs got arguments of the declared types;
- every error text tells the model what to do next;
- every result is valid Unicode, so the next request can be encoded.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from openprogram import Registry, Runtime, ToolCall, ToolResultMessage, function
from openprogram.events import ToolCallCompleted, ToolCallFailed, ToolCallSkipped
from openprogram.messages import AssistantMessage
from openprogram.providers.base import ProviderRequest
from openprogram.runtime import run_tools_sync
from openprogram.testing import FunctionProvider, ScriptedProvider

from ._garbage import deep, scenarios
from ._zoo import JOURNAL, ZOO, Color, Journal, Person, Point, forbidden_tool

FUZZ = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.large_base_example,
    ],
)

_GUIDANCE = (
    "Available tools:",  # not in the menu
    "again",  # malformed or invalid arguments: call it again with ...
    "failed:",  # the body raised: type and message
    "Not run: this exact call",  # repeated failure
)


def _check_types(name: str, args: dict[str, Any]) -> None:
    """What a body received matches its declared parameter types."""
    if name == "scalars":
        assert isinstance(args["s"], str)
        assert type(args["i"]) is int
        assert type(args["b"]) is bool
        assert type(args["f"]) is float
        assert args["n"] is None
    elif name == "containers":
        assert all(type(v) is int for v in args["items"])
        assert isinstance(args["tags"], set)
        assert all(type(t) is str for t in args["tags"])
        assert isinstance(args["pair"], tuple)
        assert all(type(v) is int for v in args["pair"])
        assert all(type(k) is str and type(v) is float for k, v in args["mapping"].items())
    elif name == "enums":
        assert args["unit"] in ("c", "f")
        assert isinstance(args["color"], Color)
        assert args["note"] is None or isinstance(args["note"], str)
    elif name == "nested":
        assert isinstance(args["person"], Person)
        assert isinstance(args["point"], Point)
        assert type(args["options"]["level"]) is int
        assert type(args["options"]["verbose"]) is bool
    elif name in ("async_echo", "echo"):
        assert isinstance(args["text"], str)
    elif name in ("with_context", "plain", "agent"):
        assert all(isinstance(v, int | str) for v in args.values())
    elif name == "spec_dict":
        assert isinstance(args["query"], str)
        assert len(args["query"]) <= 100
        assert set(args) <= {"query", "limit", "filters", "ids"}
    elif name == "spec_object":
        assert isinstance(args["key"], str)
        assert set(args) <= {"key", "strict"}


def check_answers(
    calls: Sequence[ToolCall], results: Sequence[ToolResultMessage], menu: Sequence[str]
) -> None:
    """The invariants of one answered reply (see the module docstring)."""
    assert len(results) == len(calls)
    for call, result in zip(calls, results, strict=True):
        assert (result.call_id, result.tool_name) == (call.id, call.name)
        result.content.encode("utf-8")  # no lone surrogate can reach the next request
        if call.name not in menu:
            assert result.is_error
            assert "Available tools:" in result.content
            assert all(name in result.content for name in menu)
        elif call.arguments_error is not None:
            assert result.is_error
            assert "not a valid JSON object" in result.content
            assert f"Call {call.name!r} again" in result.content
        if result.is_error:
            assert any(hint in result.content for hint in _GUIDANCE), result.content
            if result.content.startswith("Invalid arguments"):
                # One "- path: message" line per violation (a key may itself hold a newline).
                first = result.content.split("\n")[1]
                assert first.startswith("- ")
                assert ": " in result.content
    ran = Counter(JOURNAL.names())
    runnable = Counter(c.name for c in calls if c.name in menu and c.arguments_error is None)
    assert not ran - runnable, f"ran without a matching call in the menu: {ran - runnable}"
    for name, args in JOURNAL.entries:
        _check_types(name, args)


@FUZZ
@given(scenario=scenarios())
def test_run_tools_answers_every_garbage_call_and_runs_nothing_off_the_menu(
    scenario: tuple[list[str], list[ToolCall]],
) -> None:
    menu, calls = scenario
    JOURNAL.clear()
    results = run_tools_sync(calls, [ZOO[name] for name in menu])
    check_answers(calls, results, menu)


@settings(FUZZ, max_examples=60)
@given(scenario=scenarios(), parallel=st.booleans())
def test_exec_survives_garbage_replies_and_feeds_one_result_per_call_back(
    scenario: tuple[list[str], list[ToolCall]], parallel: bool
) -> None:
    menu, calls = scenario
    # A provider always yields an object of arguments (see ToolCall); the rest is fair game.
    calls = [c if isinstance(c.arguments, dict) else replace(c, arguments={}) for c in calls]
    JOURNAL.clear()
    forbidden = Journal()
    registry = Registry()
    registry.register(forbidden_tool("forbidden", forbidden))
    seen: list[AssistantMessage] = []

    def model(request: ProviderRequest) -> Any:
        if len(request.messages) == 1:
            return AssistantMessage(tuple(calls), stop_reason="tool_calls")
        return "done"

    events: list[Any] = []
    rt = Runtime(FunctionProvider(model), registry=registry, observers=[events.append])
    output = rt.exec("go", tools=[ZOO[name] for name in menu], parallel_tool_calls=parallel)
    assert output == "done"
    assert forbidden.entries == []
    assert rt.last_run is not None
    messages = rt.last_run.messages
    reply = messages[1]
    assert isinstance(reply, AssistantMessage)
    seen.append(reply)
    results = [m for m in messages if isinstance(m, ToolResultMessage)]
    check_answers(reply.tool_calls, results, menu)
    terminal = (ToolCallCompleted, ToolCallFailed, ToolCallSkipped)
    assert sum(isinstance(e, terminal) for e in events) == len(calls)


def test_a_cached_tool_runs_arguments_too_deep_to_encode_without_caching_them() -> None:
    @function(register_globally=False, cache=True)
    def remember(data: list[Any]) -> str:
        """Remember some data."""
        return "kept"

    result = asyncio.run(remember.execute({"data": deep(50_000)}))
    assert result.content == "kept"  # no RecursionError out of the cache key


def test_an_exec_error_is_not_chained_to_the_sync_bridge() -> None:
    with pytest.raises(ValueError, match="boom") as caught:
        Runtime(ScriptedProvider([ValueError("boom")])).exec("go", tools=[])
    assert caught.value.__context__ is None  # no "no running event loop" in the traceback
