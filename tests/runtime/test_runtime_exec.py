"""Runtime construction, provider resolution, options, and the basic exec round trip."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from openprogram.context import (
    AgenticFrame,
    get_current_runtime,
    get_default_runtime,
    use_current_frame,
)
from openprogram.decorators import agentic_function
from openprogram.exceptions import ConfigurationError, UserError
from openprogram.messages import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from openprogram.providers.base import ProviderRequest
from openprogram.registry import Registry
from openprogram.runtime import ExecKwargs, ExecOptions, Runtime, set_default_runtime
from openprogram.testing import FunctionProvider, ScriptedProvider, call
from openprogram.tools import Tool, ToolContext


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: First addend.
        b: Second addend.
    """
    return a + b


def test_text_answer_is_the_result_and_last_run_records_the_run() -> None:
    provider = ScriptedProvider(["Hello there."])
    rt = Runtime(provider)
    assert rt.exec("Say hello", tools=[]) == "Hello there."
    run = rt.last_run
    assert run is not None
    assert run.output == "Hello there."
    assert run.stop_reason == "stop"
    assert run.iterations == 1
    assert [type(m).__name__ for m in run.messages] == ["UserMessage", "AssistantMessage"]
    assert run.text == "Hello there."
    assert run.usage.total_tokens > 0


def test_tool_call_round_trip_feeds_the_result_back() -> None:
    provider = ScriptedProvider([call("add", a=2, b=3), "It is 5."])
    rt = Runtime(provider)
    assert rt.exec("2 + 3?", tools=[add]) == "It is 5."
    second = provider.requests[1]
    result = second.messages[-1]
    assert isinstance(result, ToolResultMessage)
    assert (result.tool_name, result.content, result.is_error) == ("add", "5", False)
    reply = second.messages[1]
    assert isinstance(reply, AssistantMessage)
    assert result.call_id == reply.tool_calls[0].id
    assert [s["name"] for s in provider.requests[0].tools] == ["add"]
    assert rt.last_run is not None
    assert rt.last_run.iterations == 2


def test_usage_sums_over_model_calls() -> None:
    replies = [
        AssistantMessage((call("add", a=1, b=1),), usage=Usage(input_tokens=10, output_tokens=2)),
        AssistantMessage((TextContent("2"),), usage=Usage(input_tokens=20, output_tokens=3)),
    ]
    rt = Runtime(ScriptedProvider(replies))
    rt.exec("1+1", tools=[add])
    assert rt.last_run is not None
    assert (rt.last_run.usage.input_tokens, rt.last_run.usage.output_tokens) == (30, 5)


def test_async_exec_is_the_same_loop() -> None:
    rt = Runtime(ScriptedProvider([call("add", a=1, b=2), "3"]))
    assert asyncio.run(rt.async_exec("1+2", tools=[add])) == "3"


def test_content_blocks_reach_the_provider() -> None:
    provider = ScriptedProvider(["a cat"])
    blocks = ["What is this?", {"type": "image", "data": b"\x89PNG", "mime_type": "image/png"}]
    Runtime(provider).exec(blocks, tools=[])
    content = provider.requests[0].messages[0].content
    assert isinstance(content, tuple)
    assert content[0] == TextContent("What is this?")
    assert isinstance(content[1], ImageContent)
    assert content[1].mime_type == "image/png"


def test_model_override_order_exec_then_runtime_then_provider() -> None:
    provider = ScriptedProvider(["a", "b", "c"], model="provider-model")
    Runtime(provider).exec("x", tools=[])
    Runtime(provider, model="runtime-model").exec("x", tools=[])
    Runtime(provider, model="runtime-model").exec("x", tools=[], model="exec-model")
    assert [r.model for r in provider.requests] == ["provider-model", "runtime-model", "exec-model"]


def test_max_retries_and_deadline_travel_in_the_request() -> None:
    provider = ScriptedProvider(["ok", "ok"])
    Runtime(provider, max_retries=2).exec("x", tools=[], timeout_s=30)
    Runtime(provider).exec("x", tools=[])
    first, second = provider.requests
    assert first.max_retries == 2
    assert first.deadline is not None
    assert second.max_retries is None
    assert second.deadline is None


def test_system_prompt_precedence_agentic_frame_beats_runtime_default() -> None:
    provider = ScriptedProvider(["a", "b", "c"])
    rt = Runtime(provider, system="runtime default")
    rt.exec("x", tools=[])
    with use_current_frame(AgenticFrame(name="planner", system="frame prompt")):
        rt.exec("x", tools=[])
    with use_current_frame(AgenticFrame(name="plain")):
        rt.exec("x", tools=[])
    assert [r.system for r in provider.requests] == [
        "runtime default",
        "frame prompt",
        "runtime default",
    ]


def test_no_provider_configured_says_what_to_set(monkeypatch: pytest.MonkeyPatch) -> None:
    from openprogram.providers import local

    monkeypatch.delenv("OPENPROGRAM_MODEL", raising=False)
    monkeypatch.setattr(local, "local_available", lambda: False)  # as without the extra
    rt = Runtime()  # constructing never fails: the error comes at the first exec
    with pytest.raises(ConfigurationError) as info:
        rt.exec("x")
    text = str(info.value)
    assert "OPENPROGRAM_MODEL" in text
    assert "Runtime(provider=" in text
    assert "ScriptedProvider" in text
    assert "openprogram-ai[local]" in text


def test_the_local_model_is_the_default_when_its_extra_is_installed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from openprogram.providers import local

    monkeypatch.delenv("OPENPROGRAM_MODEL", raising=False)
    monkeypatch.setattr(local, "local_available", lambda: True)
    provider = Runtime().provider  # resolving starts no server: that happens at first use
    assert isinstance(provider, local.LocalProvider)
    assert provider.model == "qwen2.5-coder-0.5b"


def test_provider_string_and_env_var_go_through_resolve_provider(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import openprogram.runtime._runtime as runtime_module

    seen: list[str] = []
    fake = ScriptedProvider(["from env", "from string"])

    def resolve(spec: str) -> ScriptedProvider:
        seen.append(spec)
        return fake

    # The providers engineer replaces resolve_provider; here a real resolver function stands in.
    monkeypatch.setattr(runtime_module, "resolve_provider", resolve)
    monkeypatch.setenv("OPENPROGRAM_MODEL", "openai:gpt-4o-mini")
    assert Runtime().exec("x", tools=[]) == "from env"
    assert Runtime("anthropic:claude").exec("x", tools=[]) == "from string"
    assert seen == ["openai:gpt-4o-mini", "anthropic:claude"]


def test_unavailable_provider_string_raises_configuration_error() -> None:
    rt = Runtime("openai:gpt-4o-mini")
    with pytest.raises(ConfigurationError):
        rt.exec("x")


@pytest.mark.parametrize(
    ("kwargs", "error", "needle"),
    [
        ({"provider": object()}, TypeError, "is not a provider"),
        ({"max_depth": 0}, UserError, "max_depth"),
        ({"max_retries": -1}, UserError, "max_retries"),
        ({"approval": "yes"}, TypeError, "approval"),
        ({"on_stream": 3}, TypeError, "on_stream"),
        ({"observers": [1]}, TypeError, "observers"),
    ],
)
def test_bad_runtime_arguments_are_rejected(
    kwargs: dict[str, Any], error: type[Exception], needle: str
) -> None:
    with pytest.raises(error, match=needle):
        Runtime(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "error", "needle"),
    [
        ({"toolz": []}, TypeError, "toolz"),
        ({"tools": [], "toolset": "web"}, UserError, "one or the other"),
        ({"tool_choice": "sometimes"}, UserError, "not a tool choice"),
        ({"tool_choice": {"type": "function"}}, UserError, "not a tool choice"),
        ({"on_max_iterations": "explode"}, UserError, "on_max_iterations"),
        ({"max_iterations": "3"}, UserError, "max_iterations"),
        ({"timeout_s": 0}, UserError, "timeout_s"),
        ({"choices": ["a"], "response_format": {"type": "object"}}, UserError, "one or the other"),
        ({"structured_fallback": "prompt"}, UserError, "only applies with response_format"),
    ],
)
def test_bad_exec_options_fail_before_any_request(
    kwargs: dict[str, Any], error: type[Exception], needle: str
) -> None:
    provider = ScriptedProvider(["never"])
    with pytest.raises(error, match=needle):
        Runtime(provider).exec("x", **kwargs)
    assert provider.requests == []


def test_exec_kwargs_and_exec_options_list_the_same_options() -> None:
    from dataclasses import fields

    assert set(ExecKwargs.__annotations__) == {f.name for f in fields(ExecOptions)}


def test_sync_exec_works_inside_a_running_event_loop() -> None:
    rt = Runtime(ScriptedProvider([call("add", a=1, b=2), "3"]))

    async def main() -> str:
        return str(rt.exec("1+2", tools=[add]))  # blocks this loop; runs on a worker thread

    assert asyncio.run(main()) == "3"


def test_sync_exec_works_from_plain_threads() -> None:
    rt = Runtime(FunctionProvider(lambda request: "ok"))
    results: list[str] = []
    threads = [
        threading.Thread(target=lambda: results.append(rt.exec("x", tools=[]))) for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == ["ok"] * 4


def test_with_runtime_makes_it_current_for_the_block_and_nests() -> None:
    outer, inner = Runtime(ScriptedProvider([])), Runtime(ScriptedProvider([]))
    assert get_current_runtime() is None
    with outer:
        assert get_current_runtime() is outer
        with inner:
            assert get_current_runtime() is inner
        assert get_current_runtime() is outer
    assert get_current_runtime() is None


def test_with_runtime_blocks_in_concurrent_tasks_do_not_mix() -> None:
    a, b = Runtime(ScriptedProvider([])), Runtime(ScriptedProvider([]))
    seen: list[bool] = []

    async def block(rt: Runtime, gate: asyncio.Event, other: asyncio.Event) -> None:
        with rt:
            other.set()
            await gate.wait()
            seen.append(get_current_runtime() is rt)

    async def main() -> None:
        ga, gb = asyncio.Event(), asyncio.Event()
        await asyncio.gather(block(a, ga, gb), block(b, gb, ga))

    asyncio.run(main())
    assert seen == [True, True]
    assert get_current_runtime() is None


def test_default_runtime_factory_and_set_default_runtime() -> None:
    mine = Runtime(ScriptedProvider([]))
    try:
        set_default_runtime(None)
        made = get_default_runtime()
        assert isinstance(made, Runtime)  # the runtime package installed itself as the factory
        set_default_runtime(mine)
        assert get_default_runtime() is mine
    finally:
        set_default_runtime(None)


def test_top_level_exec_without_tools_offers_the_registry() -> None:
    registry = Registry()
    registry.register(Tool.from_function(add))
    registry.register(Tool(name="hidden", execute=lambda args: "", expose=False))
    provider = ScriptedProvider([call("add", a=1, b=1), "2"])
    assert Runtime(provider, registry=registry).exec("1+1") == "2"
    assert [s["name"] for s in provider.requests[0].tools] == ["add"]


@pytest.mark.parametrize("opt_out", [{"toolset": "none"}, {"tools": []}])
def test_pure_reasoning_call_sends_no_tools(opt_out: ExecKwargs) -> None:
    registry = Registry()
    registry.register(Tool.from_function(add))
    provider = ScriptedProvider(["thinking only"])
    Runtime(provider, registry=registry).exec("x", **opt_out)
    assert provider.requests[0].tools == ()


def test_tools_deny_allow_and_source_narrow_the_menu() -> None:
    def mul(a: int, b: int) -> int:
        """Multiply."""
        return a * b

    def shell(cmd: str) -> str:
        """Run a command."""
        return cmd

    shell_tool = Tool.from_function(shell, unsafe_in=("chat",))
    provider = ScriptedProvider(["a", "b", "c"])
    rt = Runtime(provider)
    rt.exec("x", tools=[add, mul, shell_tool], tools_deny=["mul"])
    rt.exec("x", tools=[add, mul, shell_tool], tools_allow=["mul", "shell"])
    rt.exec("x", tools=[add, mul, shell_tool], tools_source="chat")
    names = [[s["name"] for s in r.tools] for r in provider.requests]
    assert names == [["add", "shell"], ["mul", "shell"], ["add", "mul"]]


def test_toolset_picks_its_members_from_the_registry() -> None:
    def mul(a: int, b: int) -> int:
        """Multiply."""
        return a * b

    registry = Registry()
    registry.register(Tool.from_function(add, toolset="math"))
    registry.register(Tool.from_function(mul))
    registry.register(Tool(name="notes", execute=lambda args: "", toolset="writing"))
    registry.define_toolset("arith", ["add", "mul"])
    provider = ScriptedProvider(["a", "b"])
    rt = Runtime(provider, registry=registry)
    rt.exec("x", toolset="math")
    rt.exec("x", toolset="arith")
    assert [[s["name"] for s in r.tools] for r in provider.requests] == [["add"], ["add", "mul"]]


def test_unknown_toolset_is_a_user_error_before_any_request() -> None:
    provider = ScriptedProvider(["never"])
    with pytest.raises(UserError, match="toolset"):
        Runtime(provider, registry=Registry()).exec("x", toolset="no-such-set")
    assert provider.requests == []


def test_a_bad_tools_entry_names_its_position() -> None:
    with pytest.raises(TypeError, match=r"tools\[1\]"):
        Runtime(ScriptedProvider(["x"])).exec("x", tools=[add, 42])


def test_timeout_s_bounds_the_whole_exec_and_tells_running_tools_to_stop() -> None:
    seen: dict[str, Any] = {}

    def stuck(ctx: ToolContext) -> str:
        """Never finishes in time."""
        seen["ctx"] = ctx
        ctx.cancel.wait(5)
        return "too late"

    rt = Runtime(ScriptedProvider([call("stuck"), "never"]))
    with pytest.raises(TimeoutError, match=r"timeout_s=0\.2"):
        rt.exec("go", tools=[stuck], timeout_s=0.2)
    assert seen["ctx"].cancel.is_set()
    assert rt.last_run is not None
    assert rt.last_run.stop_reason == "timeout"


def test_a_nested_exec_inherits_the_outer_deadline() -> None:
    deadlines: list[float | None] = []

    def reply(request: ProviderRequest) -> Any:
        deadlines.append(request.deadline)
        first = request.messages[0]
        if isinstance(first, UserMessage) and first.text == "outer" and len(request.messages) == 1:
            return call("inner_agent")
        return "ok"

    rt: Runtime

    def inner_agent() -> str:
        """Run an inner exec without its own timeout."""
        return str(rt.exec("inner", tools=[]))

    rt = Runtime(FunctionProvider(reply))
    rt.exec("outer", tools=[inner_agent], timeout_s=30)
    outer_deadline, inner_deadline, _ = deadlines
    assert outer_deadline is not None
    assert inner_deadline == outer_deadline


def test_deps_reach_can_use_gates() -> None:
    def admin_only(ctx: Any) -> bool:
        return bool(ctx.deps and ctx.deps.get("admin"))

    tool = Tool.from_function(add, can_use=admin_only)
    provider = ScriptedProvider(["a", "b"])
    Runtime(provider, deps={"admin": True}).exec("x", tools=[tool])
    Runtime(provider, deps={"admin": False}).exec("x", tools=[tool])
    assert [[s["name"] for s in r.tools] for r in provider.requests] == [["add"], []]


def test_agentic_functions_called_from_python_use_the_with_runtime() -> None:
    @agentic_function(register_globally=False)
    def summarize(text: str, runtime: Runtime) -> str:
        """Summarize."""
        return str(runtime.exec(f"Summarize: {text}", tools=[]))

    rt = Runtime(ScriptedProvider(["short"]))
    with rt:
        assert summarize("a long text") == "short"
    assert rt.last_run is not None
    assert rt.last_run.output == "short"
