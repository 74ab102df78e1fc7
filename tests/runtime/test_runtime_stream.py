"""runtime.stream(...) and Runtime(on_stream=...): text deltas, tool calls, results, final."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from openprogram.decorators import agentic_function, function
from openprogram.exceptions import LLMError
from openprogram.runtime import (
    Runtime,
    StreamFinal,
    StreamTextDelta,
    StreamToolCall,
    StreamToolResult,
)
from openprogram.testing import ScriptedProvider, call, text


@function(register_globally=False)
def lookup(q: str) -> str:
    """Look up."""
    return f"found {q}"


async def collect(rt: Runtime, content: str, **kwargs: Any) -> list[Any]:
    return [event async for event in rt.stream(content, **kwargs)]


def test_stream_yields_deltas_calls_results_and_the_final_answer() -> None:
    rt = Runtime(
        ScriptedProvider([[text("Let me check."), call("lookup", q="x")], "The answer is x."])
    )
    events = asyncio.run(collect(rt, "go", tools=[lookup]))
    delta = "StreamTextDelta"
    assert [e.kind for e in events] == [
        *[delta] * 3, "StreamToolCall", "StreamToolResult", *[delta] * 4, "StreamFinal",
    ]  # fmt: skip
    deltas = "".join(e.text for e in events if isinstance(e, StreamTextDelta))
    assert deltas == "Let me check.The answer is x."
    tool_call = next(e for e in events if isinstance(e, StreamToolCall)).call
    result = next(e for e in events if isinstance(e, StreamToolResult)).result
    assert (tool_call.name, result.call_id, result.content) == ("lookup", tool_call.id, "found x")
    final = events[-1]
    assert isinstance(final, StreamFinal)
    assert final.output == "The answer is x."
    assert final.result is rt.last_run


def test_on_stream_receives_the_same_events_during_exec() -> None:
    received: list[Any] = []
    script = [call("lookup", q="y"), "done"]
    rt = Runtime(ScriptedProvider(script), on_stream=received.append)
    rt.exec("go", tools=[lookup])
    streamed = asyncio.run(collect(Runtime(ScriptedProvider(script)), "go", tools=[lookup]))
    assert [e.kind for e in received] == [e.kind for e in streamed]
    assert received[-1].output == "done"


def test_a_raising_on_stream_callback_does_not_break_the_run() -> None:
    def broken(event: Any) -> None:
        raise RuntimeError("ui crashed")

    assert Runtime(ScriptedProvider(["fine"]), on_stream=broken).exec("go", tools=[]) == "fine"


def test_nested_runs_stream_into_the_outer_stream_which_yields_only_its_own_final() -> None:
    @agentic_function(register_globally=False)
    def helper(runtime: Runtime) -> str:
        """Inner loop on a worker thread."""
        return str(runtime.exec("inner", tools=[]))

    provider = ScriptedProvider([call("helper"), "inner words", "outer words"])
    rt = Runtime(provider)
    events = asyncio.run(collect(rt, "outer", tools=[helper]))
    finals = [e for e in events if isinstance(e, StreamFinal)]
    assert finals == [events[-1]]
    (outer_final,) = finals
    assert (outer_final.output, outer_final.parent_run_id, outer_final.depth) == (
        "outer words",
        None,
        1,
    )
    inner = [e for e in events if e.run_id != outer_final.run_id]
    assert {(e.parent_run_id, e.depth) for e in inner} == {(outer_final.run_id, 2)}
    assert "".join(e.text for e in inner if isinstance(e, StreamTextDelta)) == "inner words"


def test_on_stream_receives_every_runs_final_each_with_its_depth() -> None:
    @agentic_function(register_globally=False)
    def helper(runtime: Runtime) -> str:
        """Inner loop on a worker thread."""
        return str(runtime.exec("inner", tools=[]))

    received: list[Any] = []
    provider = ScriptedProvider([call("helper"), "inner words", "outer words"])
    Runtime(provider, on_stream=received.append).exec("outer", tools=[helper])
    finals = [e for e in received if isinstance(e, StreamFinal)]
    assert [(f.output, f.depth) for f in finals] == [("inner words", 2), ("outer words", 1)]
    inner_final, outer_final = finals
    assert inner_final.parent_run_id == outer_final.run_id
    assert received[-1] is outer_final


def test_the_first_final_of_a_stream_is_the_streamed_execs_even_when_a_sub_agent_ends_first() -> (
    None
):
    """The trap: a loop stopping at the first StreamFinal must not return a sub-agent's answer."""

    @agentic_function(register_globally=False)
    async def scout(area: str, runtime: Runtime) -> str:
        """A sub-agent.

        Args:
            area: Where to look.
        """
        return await runtime.async_exec(f"Scout {area}.", tools=[])

    provider = ScriptedProvider(
        [[call("scout", area="north"), call("scout", area="south")], "N", "S", "Both clear."]
    )
    rt = Runtime(provider)

    async def first_final() -> Any:
        async for event in rt.stream("Scout both.", tools=[scout]):
            if isinstance(event, StreamFinal):
                return event.output
        return None

    assert asyncio.run(first_final()) == "Both clear."


def test_a_stream_started_inside_a_tool_yields_its_own_final() -> None:
    """Depth is counted in the whole run tree: a stream inside a tool body starts at 2."""
    seen: list[tuple[Any, int]] = []

    @agentic_function(register_globally=False)
    async def narrate(runtime: Runtime) -> str:
        """Stream a sub-agent's answer."""
        async for event in runtime.stream("inner", tools=[lookup]):
            if isinstance(event, StreamFinal):
                seen.append((event.output, event.depth))
        return "narrated"

    provider = ScriptedProvider([call("narrate"), call("lookup", q="z"), "inner done", "outer"])
    assert Runtime(provider).exec("outer", tools=[narrate, lookup]) == "outer"
    assert seen == [("inner done", 2)]


def test_stream_raises_what_ended_the_exec() -> None:
    rt = Runtime(ScriptedProvider([LLMError("denied", reason="auth")]))
    with pytest.raises(LLMError, match="denied"):
        asyncio.run(collect(rt, "go", tools=[]))


def test_closing_the_stream_early_cancels_the_exec() -> None:
    state: dict[str, Any] = {}

    async def wait_forever() -> str:
        """Never finishes on its own."""
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            state["cancelled"] = True
            raise
        return "late"

    rt = Runtime(ScriptedProvider([call("wait_forever"), "never"]))

    async def main() -> None:
        stream = rt.stream("go", tools=[wait_forever])
        async for event in stream:
            if isinstance(event, StreamToolCall):
                await asyncio.sleep(0.01)  # let the tool start
                break
        await stream.aclose()

    asyncio.run(main())
    assert state == {"cancelled": True}
    assert rt.last_run is not None
    assert rt.last_run.stop_reason == "aborted"


def test_stream_validates_options_when_called() -> None:
    with pytest.raises(TypeError, match="toolz"):
        Runtime(ScriptedProvider([])).stream("go", toolz=[])  # type: ignore[call-arg]
