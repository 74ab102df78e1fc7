"""The README's tour runs as written: here on a fake model; on the embedded one in tests/e2e.

The block is taken from README.md itself, so an edit there is what gets
tested. Only the provider behind ``"local:..."`` is swapped for a
``FunctionProvider`` that plays a model doing what the README says: call
``plan_trip``; inside it, call ``get_weather``; answer from the results.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from openprogram import Conversation, Runtime
from openprogram.events import AgentInvoked, ToolCallStarted
from openprogram.messages import ToolResultMessage, UserMessage
from openprogram.providers import _resolve
from openprogram.providers.base import ProviderRequest
from openprogram.providers.local import ensure_server, local_available
from openprogram.testing import FunctionProvider, call

README = Path(__file__).resolve().parent.parent / "README.md"


def tour_source() -> str:
    """The python block under "A short tour" in README.md."""
    text = README.read_text(encoding="utf-8")
    match = re.search(r"^## A short tour\n.*?^```python\n(.*?)^```", text, re.DOTALL | re.MULTILINE)
    assert match, "README.md has no python block under '## A short tour'"
    return match.group(1)


def planner(request: ProviderRequest) -> Any:
    """A model that plans the trip the way the README describes, then chats from memory."""
    offered = [spec["name"] for spec in request.tools]
    said = [m.text for m in request.messages if isinstance(m, UserMessage)]
    if not offered:  # the conversation: it answers from the earlier exchange it is sent
        if said[-1] == "What do I love?":
            return "You love museums." if "museums" in said[0] else "I do not know."
        return "Nice to meet you, Ann."
    results = [m.content for m in request.messages if isinstance(m, ToolResultMessage)]
    if results:
        return f"Weekend plan, given {results[-1]}: Saturday the Louvre, Sunday a picnic."
    if offered == ["plan_trip"]:
        return call("plan_trip", destination="Paris")
    assert offered == ["get_weather"], offered
    return call("get_weather", city="Paris")


def split_tour(source: str) -> tuple[str, str]:
    """The tour's trip, and its conversation (run apart, to check each on its own)."""
    trip, sep, conversation = source.partition("\nchat = ")
    assert sep, "the tour shows no conversation (chat = runtime.conversation(...))"
    return trip, "chat = " + conversation


@pytest.mark.usefixtures("clean_registry")
def test_the_readme_tour_runs_as_written(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = FunctionProvider(planner)
    monkeypatch.setitem(_resolve._FACTORIES, "local", lambda model: fake)
    source = tour_source()
    assert 'Runtime("local:qwen2.5-coder-0.5b")' in source  # the default, embedded model
    exec(compile(source, str(README), "exec", dont_inherit=True), {"__name__": "readme_tour"})
    printed = capsys.readouterr().out
    assert "Saturday the Louvre" in printed
    assert "Paris: sunny, 21 degrees celsius" in printed  # get_weather's own result
    assert printed.endswith("You love museums.\n")  # the second send saw the first
    asked = [[spec["name"] for spec in r.tools] for r in fake.requests]
    assert asked == [["plan_trip"], ["get_weather"], ["get_weather"], ["plan_trip"], [], []]
    assert len(fake.requests[-1].messages) == 3  # the first exchange, then the question


def calls_by_depth(runtime: Runtime) -> list[tuple[str, int]]:
    """``(tool, depth)`` of every call of the last run, nested ones included, in order."""
    run = runtime.last_run
    assert run is not None
    depth = {e.run_id: e.depth for e in run.events_of(AgentInvoked)}
    return [(e.tool_name, depth[e.run_id]) for e in run.events_of(ToolCallStarted)]


@pytest.mark.local_llm
@pytest.mark.skipif(not local_available(), reason="needs pip install 'openprogram-ai[local]'")
@pytest.mark.usefixtures("clean_registry")
def test_the_readme_tour_plans_the_trip_on_the_embedded_model(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENPROGRAM_MODEL", raising=False)
    ensure_server()
    namespace: dict[str, object] = {"__name__": "readme_tour"}
    trip, conversation = split_tour(tour_source())
    exec(compile(trip, str(README), "exec", dont_inherit=True), namespace)
    answer = capsys.readouterr().out.lower()
    runtime = namespace["runtime"]
    assert isinstance(runtime, Runtime)
    calls = calls_by_depth(runtime)
    assert calls[0] == ("plan_trip", 1)
    assert ("get_weather", 2) in calls  # called by plan_trip's own exec
    assert "paris" in answer
    assert "sunny" in answer or "21" in answer  # the plan uses the weather it looked up
    assert len(answer.split()) >= 30  # a plan, not one sentence about the weather
    exec(compile(conversation, str(README), "exec", dont_inherit=True), namespace)
    assert capsys.readouterr().out.strip()  # the second send's answer
    chat = namespace["chat"]
    assert isinstance(chat, Conversation)
    assert [type(m).__name__ for m in chat.messages] == [
        "UserMessage",
        "AssistantMessage",
        "UserMessage",
        "AssistantMessage",
    ]
