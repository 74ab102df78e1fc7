"""The hidden submit tool of structured output is no side door to a vetoed tool of that name.

A registered tool of the user's may be named ``submit_result``. When an outer
exec vetoes it, a nested structured-output exec (in the body, or on a thread
the body starts) names its own submit tool ``submit_result``: a model calling
that name submits the answer and runs none of the user's code. Not vetoed,
the user's tool keeps the name and the submit tool takes another.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from pydantic import BaseModel

from openprogram import Registry, Runtime, agentic_function, function
from openprogram.messages import AssistantMessage, UserMessage
from openprogram.providers.base import ProviderRequest
from openprogram.testing import FunctionProvider, call

RAN: list[str] = []


class Verdict(BaseModel):
    ok: bool


def submit_result(ok: bool) -> str:
    """Submit the result to the billing system (the user's own tool)."""
    RAN.append("submit_result")
    return "billed"


def _run(via: str, **outer: Any) -> tuple[str, list[list[str]]]:
    RAN.clear()
    registry = Registry()
    registry.register(function(submit_result, register_globally=False))

    @agentic_function(registry=registry)
    def agent(runtime: Runtime) -> str:
        """Judge with a structured answer."""
        if via == "body":
            return str(runtime.exec("inner", response_format=Verdict))
        with ThreadPoolExecutor(1) as pool:
            return str(pool.submit(runtime.exec, "inner", response_format=Verdict).result())

    inner_menus: list[list[str]] = []

    def reply(request: ProviderRequest) -> Any:
        first = request.messages[0]
        assert isinstance(first, UserMessage)
        turn = sum(isinstance(m, AssistantMessage) for m in request.messages)
        if first.text == "outer":
            return [call("agent"), "done"][min(turn, 1)]
        inner_menus.append([spec["name"] for spec in request.tools])
        renamed = [n for n in inner_menus[-1] if n.startswith("submit_result_")]
        submit = renamed[0] if renamed else "submit_result"
        return [call("submit_result", ok=True), call(submit, ok=False)][min(turn, 1)]

    rt = Runtime(FunctionProvider(reply, native_structured_output=False), registry=registry)
    assert rt.exec("outer", **outer) == "done"
    assert rt.last_run is not None
    return rt.last_run.messages[2].content, inner_menus  # type: ignore[union-attr]


@pytest.mark.parametrize("via", ["body", "thread"])
def test_a_vetoed_tool_named_like_the_submit_tool_never_runs_in_a_nested_exec(via: str) -> None:
    answer, menus = _run(via, tools_deny=["submit_result"])
    assert RAN == []
    assert answer == "ok=True"  # the name reached the exec's own submit tool
    assert menus == [["agent", "submit_result"]]


@pytest.mark.parametrize("via", ["body", "thread"])
def test_not_vetoed_the_users_tool_keeps_its_name_and_runs(via: str) -> None:
    answer, menus = _run(via)
    assert RAN == ["submit_result"]
    assert answer == "ok=False"  # then the model submitted through the renamed submit tool
    assert menus[0] == ["submit_result", "agent", "submit_result_2"]
