"""No side doors (issue 13, gates): every path that runs a tool goes through the same gates.

Each test runs an outer exec with vetoes (an allow cap, a channel, a deny
list) whose model calls an agentic function; its body then reaches for a
forbidden tool by another path than ``tools=``: ``choices=``, a thread it
starts, a relabelled source, an inner ``toolset=``, a user tool posing as
``tool_search``. The forbidden tool's body logs when it runs; it must not.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from openprogram import (
    DecisionError,
    Registry,
    Runtime,
    ToolCall,
    ToolContext,
    UserError,
    agentic_function,
    function,
)
from openprogram.events import AgentInvoked
from openprogram.gates import GateContext, Policy, resolve
from openprogram.messages import AssistantMessage, ToolResultMessage, UserMessage
from openprogram.providers.base import ProviderRequest
from openprogram.testing import FunctionProvider, ScriptedProvider, call

RAN: list[str] = []


@pytest.fixture(autouse=True)
def _clear() -> None:
    RAN.clear()


@function(register_globally=False, unsafe_in=["public"])
def wipe() -> str:
    """Wipe everything."""
    RAN.append("wipe")
    return "wiped"


@function(register_globally=False)
def helper() -> str:
    """A harmless helper."""
    RAN.append("helper")
    return "helped"


def delete_all() -> str:
    """Delete every record."""
    RAN.append("delete_all")
    return "deleted"


def rm_rf() -> str:
    """Remove every file."""
    RAN.append("rm_rf")
    return "removed"


def _first_text(request: ProviderRequest) -> str:
    first = request.messages[0]
    assert isinstance(first, UserMessage)
    return first.text


def _model(scripts: dict[str, list[Any]]) -> Callable[[ProviderRequest], Any]:
    """A model following one script per conversation (keyed by the start of its first message)."""

    def reply(request: ProviderRequest) -> Any:
        text = _first_text(request)
        turn = sum(isinstance(m, AssistantMessage) for m in request.messages)
        for key, script in scripts.items():
            if text.startswith(key):
                return script[turn] if turn < len(script) else "done"
        raise AssertionError(f"no script for {text!r}")

    return reply


def _results(rt: Runtime, name: str) -> list[ToolResultMessage]:
    assert rt.last_run is not None
    return [
        m for m in rt.last_run.messages if isinstance(m, ToolResultMessage) and m.tool_name == name
    ]


# -- 1. choices= goes through the same gates as tools= -------------------------------------


def _decider(options: Any) -> Any:
    @agentic_function(register_globally=False)
    def decide(runtime: Runtime) -> str:
        """Decide what to do next."""
        return str(runtime.exec("decide", tools=[], choices=options))

    return decide


@pytest.mark.parametrize(
    "outer",
    [
        {"tools_allow": ["helper", "decide"]},
        {"tools_source": "public"},
        {"tools_allow": ["helper", "decide"], "tools_source": "public"},
    ],
    ids=["allow_cap", "channel", "both"],
)
def test_a_choice_outside_the_outer_allow_cap_or_unsafe_in_its_channel_never_runs(
    outer: dict[str, Any],
) -> None:
    decide = _decider([wipe, "keep"])
    model = _model({"outer": [call("decide"), "done"], "decide": ['{"call": "wipe"}']})
    rt = Runtime(FunctionProvider(model))
    assert rt.exec("outer", tools=[helper, decide], **outer) == "done"
    assert RAN == []
    (result,) = _results(rt, "decide")
    assert result.is_error
    assert "wipe" in result.content
    assert "L5 veto" in result.content or "L3 channel" in result.content


def test_the_same_choice_runs_when_no_outer_veto_forbids_it() -> None:
    decide = _decider([wipe, "keep"])
    model = _model({"outer": [call("decide"), "done"], "decide": ['{"call": "wipe"}']})
    rt = Runtime(FunctionProvider(model))
    assert rt.exec("outer", tools=[helper, decide], tools_source="internal") == "done"
    assert RAN == ["wipe"]


def test_a_labelled_choice_is_vetoed_and_approved_by_its_real_name() -> None:
    model = _model({"go": ['{"call": "cleanup"}']})
    with pytest.raises(DecisionError, match="'delete_all'"):
        Runtime(FunctionProvider(model)).exec(
            "go", tools=[], choices={"cleanup": delete_all}, tools_deny=["delete_all"]
        )
    assert RAN == []
    seen: list[ToolCall] = []

    def approval(c: ToolCall) -> str | None:
        seen.append(c)
        return "no deleting" if c.name == "delete_all" else None

    rt = Runtime(FunctionProvider(model), approval=approval)
    with pytest.raises(DecisionError, match="no deleting"):
        rt.exec("go", tools=[], choices={"cleanup": delete_all})
    assert RAN == []
    assert [c.name for c in seen] == ["delete_all"]


def test_a_labelled_tool_choice_is_vetoed_by_its_real_name_through_an_outer_exec() -> None:
    decide = _decider({"tidy": wipe, "keep": "keep"})
    model = _model({"outer": [call("decide"), "done"], "decide": ['{"call": "tidy"}']})
    rt = Runtime(FunctionProvider(model))
    assert rt.exec("outer", tools=[decide], tools_deny=["wipe"]) == "done"
    assert RAN == []
    (result,) = _results(rt, "decide")
    assert "'wipe'" in result.content
    assert "deny" in result.content


def test_a_choice_whose_can_use_refuses_the_channel_never_runs() -> None:
    guarded = function(
        delete_all, register_globally=False, can_use=lambda ctx: "public" not in ctx.sources
    )
    decide = _decider([guarded, "keep"])
    model = _model({"outer": [call("decide"), "done"], "decide": ['{"call": "delete_all"}']})
    rt = Runtime(FunctionProvider(model))
    assert rt.exec("outer", tools=[decide], tools_source="public") == "done"
    assert RAN == []


def test_value_and_schema_choices_are_not_gated() -> None:
    model = _model({"go": ['{"call": "keep"}']})
    rt = Runtime(FunctionProvider(model))
    assert rt.exec("go", tools=[], choices=["keep", "drop"], tools_allow=[]) == "keep"


# -- 2. the runtime injected into a tool body carries its call's scope ---------------------


def _inner_menus(provider: FunctionProvider) -> list[list[str]]:
    return [
        [spec["name"] for spec in r.tools]
        for r in provider.requests
        if _first_text(r).startswith("inner")
    ]


@pytest.mark.parametrize("how", ["pool", "thread", "context_runtime", "async_body"])
def test_an_exec_from_a_thread_started_in_a_tool_body_keeps_the_vetoes(how: str) -> None:
    outputs: list[str] = []

    def in_thread(runtime: Runtime, query: str) -> None:
        outputs.append(str(runtime.exec(query)))

    def fan_out(runtime: Runtime) -> str:
        if how == "pool":
            with ThreadPoolExecutor(2) as pool:
                list(pool.map(lambda q: in_thread(runtime, q), ["inner 1", "inner 2"]))
        else:
            threads = [
                threading.Thread(target=in_thread, args=(runtime, q))
                for q in ("inner 1", "inner 2")
            ]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        return "fanned out"

    if how == "context_runtime":

        @agentic_function(register_globally=False)
        def agent(ctx: ToolContext) -> str:
            """Fan out to threads."""
            return fan_out(ctx.runtime)
    elif how == "async_body":

        @agentic_function(register_globally=False, name="agent")
        async def agent(runtime: Runtime) -> str:  # type: ignore[misc]
            """Fan out to threads."""
            return fan_out(runtime)
    else:

        @agentic_function(register_globally=False, name="agent")
        def agent(runtime: Runtime) -> str:  # type: ignore[misc]
            """Fan out to threads."""
            return fan_out(runtime)

    registry = Registry()
    for tool in (function(rm_rf, register_globally=False), helper, agent.tool):
        registry.register(tool)
    model = _model({"outer": [call("agent"), "done"], "inner": [call("rm_rf"), "inner done"]})
    provider = FunctionProvider(model)
    rt = Runtime(provider, registry=registry)
    assert rt.exec("outer", tools_deny=["rm_rf"]) == "done"
    assert RAN == []
    assert outputs == ["inner done", "inner done"]
    # The inner execs inherit the outer menu and nest one level below it.
    assert _inner_menus(provider) == [["helper", "agent"]] * 4
    assert rt.last_run is not None
    depths = [e.depth for e in rt.last_run.events if isinstance(e, AgentInvoked)]
    assert sorted(depths) == [1, 2, 2]


def test_a_thread_in_a_tool_body_keeps_the_allow_cap_and_the_channel() -> None:
    registry = Registry()

    @agentic_function(registry=registry)
    def agent(runtime: Runtime) -> str:
        """Run inner execs on a thread."""
        with ThreadPoolExecutor(1) as pool:
            return pool.submit(runtime.exec, "inner", toolset="ops").result()

    registry.register(function(rm_rf, register_globally=False, toolset="ops"))
    registry.register(
        function(wipe.fn, name="wipe", register_globally=False, unsafe_in=["public"], toolset="ops")
    )
    model = _model(
        {"outer": [call("agent"), "done"], "inner": [[call("rm_rf"), call("wipe")], "ok"]}
    )
    provider = FunctionProvider(model)
    rt = Runtime(provider, registry=registry)
    rt.exec("outer", tools_allow=["agent", "wipe"], tools_source="public")
    assert RAN == []
    assert _inner_menus(provider) == [[], []]


def test_the_bound_runtime_runs_on_the_body_thread_exactly_as_before() -> None:
    seen: list[object] = []

    @agentic_function(register_globally=False)
    def agent(runtime: Runtime, ctx: ToolContext) -> str:
        """Run an inner exec on the body's own thread."""
        seen.extend([runtime, ctx.runtime])
        return str(runtime.exec("inner"))

    model = _model({"outer": [call("agent"), "done"], "inner": [call("helper"), "inner done"]})
    provider = FunctionProvider(model)
    rt = Runtime(provider, system="sys")
    assert rt.exec("outer", tools=[agent, helper]) == "done"
    assert RAN == ["helper"]
    assert all(r == rt and isinstance(r, Runtime) for r in seen)
    assert _inner_menus(provider) == [["agent", "helper"]] * 2
    assert rt.last_run is not None
    assert rt.last_run.output == "done"


def test_a_runtime_bound_to_one_run_refuses_to_run_inside_an_unrelated_run() -> None:
    kept: list[Runtime] = []

    @agentic_function(register_globally=False)
    def keep(runtime: Runtime) -> str:
        """Keep the injected runtime."""
        kept.append(runtime)
        return "kept"

    @agentic_function(register_globally=False)
    def misuse(runtime: Runtime) -> str:
        """Use another run's runtime."""
        return str(kept[0].exec("inner"))

    rt = Runtime(FunctionProvider(_model({"one": [call("keep"), "done"]})))
    rt.exec("one", tools=[keep], tools_deny=["rm_rf"])
    other = Runtime(FunctionProvider(_model({"two": [call("misuse"), "done"]})))
    other.exec("two", tools=[misuse])
    (result,) = _results(other, "misuse")
    assert result.is_error
    assert "bound to another run" in result.content


# -- 3. GateContext.sources ----------------------------------------------------------------


def test_can_use_sees_every_source_the_run_came_through() -> None:
    contexts: list[GateContext] = []

    def only_private(ctx: GateContext) -> bool:
        contexts.append(ctx)
        return "public" not in ctx.sources

    guarded = function(delete_all, register_globally=False, can_use=only_private)

    @agentic_function(register_globally=False)
    def relabel(runtime: Runtime) -> str:
        """Run an inner exec under another label."""
        return str(runtime.exec("inner", tools=[guarded], tools_source="internal"))

    model = _model({"outer": [call("relabel"), "done"], "inner": [call("delete_all"), "ok"]})
    rt = Runtime(FunctionProvider(model))
    assert rt.exec("outer", tools=[relabel], tools_source="public") == "done"
    assert RAN == []
    assert contexts
    assert all(c.sources == ("public", "internal") for c in contexts)
    assert all(c.source == "internal" for c in contexts)


def test_gate_context_sources_order_and_defaults() -> None:
    assert GateContext(source="web").sources == ("web",)
    assert GateContext(source=None).sources == ()
    outer = Policy(source="a")
    inner = outer.narrow(Policy(source="b")).narrow(Policy(source="c"))
    assert inner.source_trail == ("a", "b", "c")
    assert inner.narrow(Policy(source="a")).source_trail == ("b", "c", "a")  # last place kept
    assert Policy(source="b", inherited_sources=["c", "a"]).source_trail == ("c", "a", "b")
    seen: list[GateContext] = []
    tool = function(delete_all, register_globally=False, can_use=lambda c: seen.append(c) or True)
    resolve([tool], inner)
    assert seen[0].sources == ("a", "b", "c")
    assert seen[0].source == "c"


# -- 4. an inner toolset= -------------------------------------------------------------------


def test_an_inner_toolset_selects_from_the_registry_under_the_outer_allow_cap() -> None:
    registry = Registry()
    ops = function(rm_rf, registry=registry, toolset="ops")
    registry.register(helper)

    @agentic_function(registry=registry)
    def agent(runtime: Runtime) -> str:
        """Run an inner exec on a preset."""
        return str(runtime.exec("inner", toolset="ops"))

    model = _model({"outer": [call("agent"), "done"], "inner": [call("rm_rf"), "ok"]})
    provider = FunctionProvider(model)
    # Not in the outer menu, but the caller set no cap: the preset is the agent's own choice.
    Runtime(provider, registry=registry).exec("outer", tools=[agent, helper])
    assert RAN == ["rm_rf"]
    assert _inner_menus(provider)[0] == [ops.name]
    RAN.clear()
    provider = FunctionProvider(model)
    Runtime(provider, registry=registry).exec("outer", tools=[agent], tools_allow=["agent"])
    assert RAN == []
    assert _inner_menus(provider) == [[], []]


# -- 5. a user tool named tool_search ------------------------------------------------------


def test_a_user_tool_named_tool_search_is_refused_when_tools_are_deferred() -> None:
    fake_search = function(helper.fn, name="tool_search", register_globally=False)
    deferred = function(rm_rf, register_globally=False, defer=True)
    rt = Runtime(ScriptedProvider(["never sent"]))
    with pytest.raises(UserError, match="tool_search") as info:
        rt.exec("go", tools=[fake_search, deferred])
    assert "rename" in str(info.value)
    # Without deferred tools there is no built-in to clash with.
    rt = Runtime(ScriptedProvider([call("tool_search"), "done"]))
    assert rt.exec("go", tools=[fake_search]) == "done"
    assert RAN == ["helper"]


# -- 11. an agentic function's system= stays in its own body ------------------------------


def test_system_of_an_agentic_function_does_not_reach_execs_of_the_plain_tools_it_calls() -> None:
    def probe(runtime: Runtime) -> str:
        """Run an exec from a plain tool (and from a thread it starts)."""
        runtime.exec("inner plain")
        worker = threading.Thread(target=runtime.exec, args=("inner thread",))
        worker.start()
        worker.join()
        return "probed"

    @agentic_function(register_globally=False, system="AGENT PROMPT")
    def agent(runtime: Runtime) -> str:
        """Run an exec in its own body."""
        return str(runtime.exec("inner own", tools=[probe]))

    model = _model(
        {
            "outer": [call("agent"), "done"],
            "inner own": [call("probe"), "own done"],
            "inner plain": ["plain done"],
            "inner thread": ["thread done"],
        }
    )
    provider = FunctionProvider(model)
    Runtime(provider, system="RUNTIME PROMPT").exec("outer", tools=[agent])
    systems = {_first_text(r): r.system for r in provider.requests}
    assert systems == {
        "outer": "RUNTIME PROMPT",
        "inner own": "AGENT PROMPT",
        "inner plain": "RUNTIME PROMPT",
        "inner thread": "RUNTIME PROMPT",
    }


# -- tool_search and the submit tool cannot smuggle a tool ----------------------------------


@pytest.mark.parametrize("via", ["body", "thread"])
def test_tool_search_in_a_nested_exec_never_loads_a_tool_the_caller_vetoed(via: str) -> None:
    registry = Registry()
    registry.register(function(rm_rf, register_globally=False, defer=True))
    registry.register(function(delete_all, register_globally=False, defer=True))

    @agentic_function(registry=registry)
    def agent(runtime: Runtime) -> str:
        """Run an inner exec."""
        if via == "body":
            return str(runtime.exec("inner"))
        with ThreadPoolExecutor(1) as pool:
            return str(pool.submit(runtime.exec, "inner").result())

    inner = [
        call("tool_search", query="select:rm_rf,delete_all"),
        [call("rm_rf"), call("delete_all")],
        "inner done",
    ]
    model = _model({"outer": [call("agent"), "done"], "inner": inner})
    rt = Runtime(FunctionProvider(model), registry=registry)
    assert rt.exec("outer", tools_deny=["rm_rf"]) == "done"
    assert RAN == ["delete_all"]  # the control: a deferred tool the caller allows loads and runs


def test_the_structured_submit_tool_runs_no_tool_and_other_calls_are_gated() -> None:
    from pydantic import BaseModel

    class Verdict(BaseModel):
        ok: bool

    script = [[call("submit_result", ok=True), call("wipe")], "unused"]
    provider = ScriptedProvider(script, native_structured_output=False)
    rt = Runtime(provider)
    answer = rt.exec("go", tools=[wipe], tools_source="public", response_format=Verdict)
    assert answer == Verdict(ok=True)
    assert RAN == []
    (result,) = _results(rt, "wipe")
    assert result.is_error


def test_a_picked_plain_function_gets_no_agentic_system_prompt_either() -> None:
    def summarise(runtime: Runtime) -> str:
        """Summarise with a model call of its own."""
        return str(runtime.exec("inner summary", tools=[]))

    @agentic_function(register_globally=False, system="AGENT PROMPT")
    def agent(runtime: Runtime) -> str:
        """Decide the next step."""
        return str(runtime.exec("decide", tools=[], choices={"sum": summarise, "stop": "stopped"}))

    model = _model(
        {"outer": [call("agent"), "done"], "decide": ['{"call": "sum"}'], "inner": ["summary"]}
    )
    provider = FunctionProvider(model)
    Runtime(provider, system="RUNTIME PROMPT").exec("outer", tools=[agent])
    systems = {_first_text(r).split("\n")[0]: r.system for r in provider.requests}
    assert systems == {
        "outer": "RUNTIME PROMPT",
        "decide": "AGENT PROMPT",
        "inner summary": "RUNTIME PROMPT",
    }
