"""The tool executor, inside exec and on its own (run_tools / run_tools_sync)."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from openprogram.context import get_current_runtime
from openprogram.decorators import agentic_function
from openprogram.events import ToolCallCompleted, ToolCallProgress
from openprogram.exceptions import ToolError, UserError
from openprogram.messages import AssistantMessage, ToolCall, ToolResultMessage
from openprogram.providers.base import ProviderRequest
from openprogram.registry import Registry
from openprogram.runtime import (
    MAX_PARALLEL,
    RunResult,
    Runtime,
    StreamProgress,
    run_tools,
    run_tools_sync,
)
from openprogram.testing import ScriptedProvider, call
from openprogram.tools import Tool, ToolContext


def results_of(run: RunResult | None) -> list[ToolResultMessage]:
    assert run is not None
    return [m for m in run.messages if isinstance(m, ToolResultMessage)]


def reply_of(request: ProviderRequest) -> AssistantMessage:
    reply = request.messages[1]
    assert isinstance(reply, AssistantMessage)
    return reply


def echo(text: str) -> str:
    """Echo the text.

    Args:
        text: What to echo.
    """
    return text


# -- batches ----------------------------------------------------------------------------------


def test_several_sync_calls_run_concurrently_and_results_keep_call_order() -> None:
    barrier = threading.Barrier(3, timeout=5)  # passes only if all three bodies run at once

    def meet(n: int) -> int:
        """Wait for the others."""
        barrier.wait()
        time.sleep(0.01 * (3 - n))  # finish in reverse order
        return n

    provider = ScriptedProvider([[call("meet", n=1), call("meet", n=2), call("meet", n=3)], "ok"])
    rt = Runtime(provider)
    rt.exec("go", tools=[meet])
    assert [r.content for r in results_of(rt.last_run)] == ["1", "2", "3"]
    ids = [c.id for c in reply_of(provider.requests[1]).tool_calls]
    assert [r.call_id for r in results_of(rt.last_run)] == ids


@pytest.mark.parametrize("agentic", [False, True])
def test_async_bodies_are_all_gathered_beyond_the_thread_cap(agentic: bool) -> None:
    arrived = {"n": 0}
    everyone: asyncio.Event | None = None

    async def meet(n: int) -> int:
        """Wait until all twenty calls run at once."""
        nonlocal everyone
        everyone = everyone or asyncio.Event()
        arrived["n"] += 1
        if arrived["n"] == 20:
            everyone.set()
        await asyncio.wait_for(everyone.wait(), 5)  # times out if calls were capped at 8
        return n

    tool = agentic_function(meet, register_globally=False) if agentic else meet
    rt = Runtime(ScriptedProvider([[call("meet", n=i) for i in range(20)], "ok"]))
    rt.exec("go", tools=[tool])
    assert [r.content for r in results_of(rt.last_run)] == [str(i) for i in range(20)]


def test_at_most_eight_sync_bodies_of_a_batch_run_at_once() -> None:
    lock = threading.Lock()
    running = {"now": 0, "peak": 0}

    def work(n: int) -> int:
        """Hold a slot briefly."""
        with lock:
            running["now"] += 1
            running["peak"] = max(running["peak"], running["now"])
        time.sleep(0.02)
        with lock:
            running["now"] -= 1
        return n

    rt = Runtime(ScriptedProvider([[call("work", n=i) for i in range(20)], "ok"]))
    rt.exec("go", tools=[work])
    assert running["peak"] == MAX_PARALLEL
    assert len(results_of(rt.last_run)) == 20


def test_a_tool_that_is_not_parallel_safe_makes_the_batch_sequential() -> None:
    active = {"now": 0, "overlap": False}

    def step(n: int) -> int:
        """A step."""
        active["now"] += 1
        active["overlap"] |= active["now"] > 1
        time.sleep(0.01)
        active["now"] -= 1
        return n

    unsafe = Tool.from_function(echo, parallel_safe=False)
    batch = [call("step", n=1), call("echo", text="x"), call("step", n=2), call("step", n=3)]
    rt = Runtime(ScriptedProvider([batch, "ok"]))
    rt.exec("go", tools=[step, unsafe])
    assert active["overlap"] is False
    assert [r.content for r in results_of(rt.last_run)] == ["1", "x", "2", "3"]


def test_one_call_runs_inline_and_sync_bodies_run_off_the_loop_thread() -> None:
    threads: list[str] = []

    def where() -> str:
        """Report the thread."""
        threads.append(threading.current_thread().name)
        return "ok"

    Runtime(ScriptedProvider([call("where"), "done"])).exec("go", tools=[where])
    assert threads
    assert threads[0] != threading.main_thread().name


# -- errors become results -------------------------------------------------------------------


def test_every_kind_of_failure_becomes_an_error_result_and_the_loop_goes_on() -> None:
    def boom() -> str:
        """Fail."""
        raise RuntimeError("disk on fire")

    def refuse() -> str:
        """Refuse on purpose."""
        raise ToolError("Use a smaller file.")

    malformed = ToolCall("bad", "echo", {}, arguments_error="Expecting ',' delimiter")
    reply = AssistantMessage(
        (call("boom"), call("refuse"), call("echo", text=42), malformed, call("nope")),
        stop_reason="tool_calls",
    )
    rt = Runtime(ScriptedProvider([reply, "recovered"]))
    assert rt.exec("go", tools=[boom, refuse, echo]) == "recovered"
    texts = [r.content for r in results_of(rt.last_run)]
    assert all(r.is_error for r in results_of(rt.last_run))
    assert texts[0] == "Tool 'boom' failed: RuntimeError: disk on fire"
    assert texts[1] == "Use a smaller file."
    assert "text: expected string" in texts[2]
    assert "not a valid JSON object (Expecting ',' delimiter)" in texts[3]
    assert "'nope' is not available" in texts[4]
    assert "boom, refuse, echo" in texts[4]


def test_per_tool_timeout_is_an_error_result_and_sets_cancel() -> None:
    seen: dict[str, Any] = {}

    def slow(ctx: ToolContext) -> str:
        """Too slow."""
        seen["ctx"] = ctx
        ctx.cancel.wait(2)
        return "late"

    tool = Tool.from_function(slow, timeout=0.05)
    rt = Runtime(ScriptedProvider([call("slow"), "gave up"]))
    assert rt.exec("go", tools=[tool]) == "gave up"
    result = results_of(rt.last_run)[0]
    assert result.is_error
    assert "timed out after 0.05 s" in result.content
    assert seen["ctx"].cancel.is_set()


def test_long_results_are_truncated_head_and_tail_with_a_marker() -> None:
    def dump() -> str:
        """A big result."""
        return "HEAD" + "x" * 5000 + "TAIL"

    tool = Tool.from_function(dump, max_result_chars=1000)
    rt = Runtime(ScriptedProvider([call("dump"), "ok"]))
    rt.exec("go", tools=[tool])
    content = results_of(rt.last_run)[0].content
    assert len(content) <= 1000
    assert content.startswith("HEAD")
    assert content.endswith("TAIL")
    assert "truncated" in content
    assert "5008" in content


def test_a_third_identical_failing_call_is_not_run() -> None:
    runs: list[int] = []

    def flaky(n: int) -> str:
        """Always fails."""
        runs.append(n)
        raise RuntimeError("nope")

    script = [call("flaky", n=1), call("flaky", n=1), call("flaky", n=1), call("flaky", n=2), "ok"]
    rt = Runtime(ScriptedProvider(script))
    rt.exec("go", tools=[flaky])
    assert runs == [1, 1, 2]  # the third identical call was answered without running
    third = results_of(rt.last_run)[2]
    assert third.is_error
    assert "already failed 2 times" in third.content
    assert "change the arguments" in third.content


def test_malformed_calls_are_not_counted_as_identical() -> None:
    bad = AssistantMessage(
        (ToolCall("", "echo", {}, arguments_error="Unterminated string"),), stop_reason="tool_calls"
    )
    rt = Runtime(ScriptedProvider([bad, bad, bad, "ok"]))
    rt.exec("go", tools=[echo])
    contents = [r.content for r in results_of(rt.last_run)]
    assert all("not a valid JSON object" in c for c in contents)
    assert len(contents) == 3


def test_a_success_resets_the_failure_count() -> None:
    state = {"fail": True, "runs": 0}

    def sometimes() -> str:
        """Fails while told to."""
        state["runs"] += 1
        if state["fail"]:
            raise RuntimeError("not yet")
        return "fine"

    def toggle() -> str:
        """Fix the other tool."""
        state["fail"] = not state["fail"]
        return "toggled"

    script = [
        call("sometimes"), call("toggle"), call("sometimes"), call("toggle"),
        call("sometimes"), call("sometimes"), "ok",
    ]  # fmt: skip
    Runtime(ScriptedProvider(script)).exec("go", tools=[sometimes, toggle])
    assert state["runs"] == 4  # fail, succeed (reset), fail, fail -> all ran


# -- ToolContext ------------------------------------------------------------------------------


def test_tool_context_is_injected_with_call_runtime_deps_and_report() -> None:
    seen: dict[str, Any] = {}

    def inspect_ctx(ctx: ToolContext) -> str:
        """Look at the context."""
        seen.update(call_id=ctx.call_id, name=ctx.tool_name, runtime=ctx.runtime, deps=ctx.deps)
        seen["current"] = get_current_runtime()
        ctx.report("halfway")
        return "ok"

    deps = {"db": "sqlite://"}
    provider = ScriptedProvider([call("inspect_ctx"), "done"])
    streamed: list[Any] = []
    rt = Runtime(provider, deps=deps, on_stream=streamed.append)
    rt.exec("go", tools=[inspect_ctx])
    call_id = reply_of(provider.requests[1]).tool_calls[0].id
    assert seen == {
        "call_id": call_id,
        "name": "inspect_ctx",
        "runtime": rt,
        "deps": deps,
        "current": rt,
    }
    assert rt.last_run is not None
    progress = rt.last_run.events_of(ToolCallProgress)
    assert len(progress) == 1
    assert progress[0].size_bytes == 7
    assert [e.text for e in streamed if isinstance(e, StreamProgress)] == ["halfway"]


# -- approval ---------------------------------------------------------------------------------


def _guarded() -> Tool:
    def delete(path: str) -> str:
        """Delete a file."""
        return f"deleted {path}"

    return Tool.from_function(delete, requires_approval=True)


def test_requires_approval_without_a_hook_is_denied() -> None:
    rt = Runtime(ScriptedProvider([call("delete", path="/tmp/x"), "ok"]))
    rt.exec("go", tools=[_guarded()])
    result = results_of(rt.last_run)[0]
    assert result.is_error
    assert "denied" in result.content
    assert "no approval hook" in result.content


def test_the_hook_is_consulted_before_every_call_and_its_reason_is_the_result() -> None:
    asked: list[str] = []

    def hook(c: ToolCall) -> str | None:
        asked.append(c.name)
        if c.name == "delete" and c.arguments["path"] != "/tmp/ok":
            return "only /tmp/ok may be deleted"
        return None

    script = [
        [call("delete", path="/tmp/ok"), call("delete", path="/etc"), call("echo", text="hi")],
        "ok",
    ]
    rt = Runtime(ScriptedProvider(script), approval=hook)
    rt.exec("go", tools=[_guarded(), echo])
    results = results_of(rt.last_run)
    assert sorted(asked) == ["delete", "delete", "echo"]
    assert results[0].content == "deleted /tmp/ok"
    assert results[1].is_error
    assert "only /tmp/ok may be deleted" in results[1].content
    assert results[2].content == "hi"


@pytest.mark.parametrize(
    ("hook", "needle"),
    [
        (lambda c: 1 / 0, "ZeroDivisionError"),
        (lambda c: False, "not None or a reason string"),
    ],
)
def test_a_broken_hook_fails_closed(hook: Any, needle: str) -> None:
    rt = Runtime(ScriptedProvider([call("echo", text="x"), "ok"]), approval=hook)
    rt.exec("go", tools=[echo])
    result = results_of(rt.last_run)[0]
    assert result.is_error
    assert needle in result.content


def test_async_hooks_and_callable_rules() -> None:
    async def hook(c: ToolCall) -> str | None:
        return None

    def big(args: Any) -> bool | str:
        return "large transfer" if args["amount"] > 100 else False

    def pay(amount: int) -> str:
        """Pay."""
        return f"paid {amount}"

    tool = Tool.from_function(pay, requires_approval=big)
    rt = Runtime(ScriptedProvider([[call("pay", amount=5), call("pay", amount=500)], "ok"]))
    rt.exec("go", tools=[tool])
    small, large = results_of(rt.last_run)
    assert small.content == "paid 5"
    assert large.is_error
    assert "large transfer" in large.content
    rt = Runtime(ScriptedProvider([call("pay", amount=500), "ok"]), approval=hook)
    rt.exec("go", tools=[tool])
    assert results_of(rt.last_run)[0].content == "paid 500"


def test_a_raising_approval_rule_fails_closed() -> None:
    def rule(args: Any) -> bool:
        raise KeyError("amount")

    tool = Tool.from_function(echo, requires_approval=rule)
    rt = Runtime(ScriptedProvider([call("echo", text="x"), "ok"]), approval=lambda c: None)
    rt.exec("go", tools=[tool])
    result = results_of(rt.last_run)[0]
    assert result.is_error
    assert "approval rule raised KeyError" in result.content


# -- law 8: no bypass -------------------------------------------------------------------------


def test_a_registered_but_unoffered_tool_is_never_executed() -> None:
    ran: list[str] = []

    def secret() -> str:
        """Must stay hidden."""
        ran.append("secret")
        return "leaked"

    registry = Registry()
    registry.register(Tool.from_function(secret))
    registry.register(Tool.from_function(echo))
    provider = ScriptedProvider([call("secret"), "ok"])
    Runtime(provider, registry=registry).exec("go", tools_deny=["secret"])
    assert ran == []
    result = provider.requests[1].messages[-1]
    assert isinstance(result, ToolResultMessage)
    assert result.is_error
    assert "not available" in result.content


# -- run_tools --------------------------------------------------------------------------------


def test_run_tools_sync_runs_calls_without_a_model() -> None:
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    calls = [
        ToolCall("c1", "add", {"a": 1, "b": 2}),
        ToolCall("c2", "nope", {}),
        ToolCall("c3", "add", {"a": "x"}),
    ]
    events: list[Any] = []
    results = run_tools_sync(calls, [add], observers=[events.append])
    assert [r.call_id for r in results] == ["c1", "c2", "c3"]
    assert results[0].content == "3"
    assert not results[0].is_error
    assert results[1].is_error
    assert "not available" in results[1].content
    assert results[2].is_error
    assert "a: " in results[2].content
    assert [e.kind for e in events if e.kind.startswith("ToolCall")].count("ToolCallStarted") == 3


def test_run_tools_accepts_a_reply_and_dict_tools_and_applies_approval_and_deps() -> None:
    seen: dict[str, Any] = {}

    def execute(args: dict[str, Any], ctx: ToolContext) -> str:
        seen["deps"] = ctx.deps
        return f"ran {args['q']}"

    spec = {
        "name": "lookup",
        "description": "Look up.",
        "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
    }
    reply = AssistantMessage(
        (ToolCall("a", "lookup", {"q": "x"}), ToolCall("b", "lookup", {"q": "y"}))
    )

    def approval(c: ToolCall) -> str | None:
        return "not y" if c.arguments["q"] == "y" else None

    results = asyncio.run(
        run_tools(reply, [{"spec": spec, "execute": execute}], deps="D", approval=approval)
    )
    assert results[0].content == "ran x"
    assert seen["deps"] == "D"
    assert results[1].is_error
    assert "not y" in results[1].content


def test_run_tools_inside_a_tool_body_joins_the_run_tree() -> None:
    def batch_runner() -> str:
        """Run two echo calls itself."""
        calls = [ToolCall("x1", "echo", {"text": "a"}), ToolCall("x2", "echo", {"text": "b"})]
        return ",".join(r.content for r in run_tools_sync(calls, [echo]))

    rt = Runtime(ScriptedProvider([call("batch_runner"), "ok"]))
    rt.exec("go", tools=[batch_runner])
    assert results_of(rt.last_run)[0].content == "a,b"
    assert rt.last_run is not None
    inner = [e for e in rt.last_run.events_of(ToolCallCompleted) if e.tool_name == "echo"]
    assert len(inner) == 2
    assert all(e.parent_run_id == rt.last_run.run_id for e in inner)


def test_run_tools_rejects_duplicate_names() -> None:
    with pytest.raises(UserError, match="two tools are named 'echo'"):
        run_tools_sync([], [echo, Tool.from_function(echo)])


def test_run_tools_with_no_calls_returns_nothing() -> None:
    assert run_tools_sync([], [echo]) == []
