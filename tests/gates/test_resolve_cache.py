"""The resolution cache stays correct: what is pure is reused, what can change is asked again."""

from __future__ import annotations

import gc
import weakref
from typing import Any

from openprogram.gates import GateContext, Policy, resolve
from openprogram.registry import Registry
from openprogram.tools import Tool


def _run(args: Any) -> str:
    return "ok"


def _tool(name: str, **options: Any) -> Tool:
    return Tool(name=name, description=f"{name} tool", execute=_run, **options)


def _registry(*tools: Tool) -> Registry:
    reg = Registry()
    for tool in tools:
        reg.register(tool)
    return reg


def test_an_unchanged_second_call_returns_the_same_resolution() -> None:
    reg = _registry(*(_tool(f"t{i}") for i in range(50)))
    first = resolve(reg, Policy(deny=["t3"]), env={})
    assert resolve(reg, Policy(deny=["t3"]), env={}) is first
    # loaded names of tools that are not deferred do not matter
    assert resolve(reg, Policy(deny=["t3"], loaded=["ghost"]), env={}) is first


def test_a_dynamic_check_fn_is_asked_again_on_every_call() -> None:
    up = {"docker": True}
    calls: list[int] = []

    def docker_running() -> bool:
        calls.append(1)
        return up["docker"]

    reg = _registry(_tool("build", check_fn=docker_running), _tool("echo"))
    assert resolve(reg, Policy()).offered_names == ("build", "echo")
    up["docker"] = False
    res = resolve(reg, Policy())
    assert res.offered_names == ("echo",)
    assert res.rejected["build"].layer == "L4 availability"
    up["docker"] = True
    assert resolve(reg, Policy()).offered_names == ("build", "echo")
    assert len(calls) == 3


def test_can_use_sees_new_deps_on_every_call() -> None:
    def admins_only(ctx: GateContext) -> bool:
        return bool(ctx.deps and ctx.deps.get("role") == "admin")

    reg = _registry(_tool("drop_db", can_use=admins_only))
    assert resolve(reg, Policy(), deps={"role": "admin"}).offered_names == ("drop_db",)
    assert resolve(reg, Policy(), deps={"role": "guest"}).offered == ()
    assert resolve(reg, Policy(), deps={"role": "admin"}).offered_names == ("drop_db",)


def test_environment_changes_are_seen() -> None:
    reg = _registry(_tool("mail", requires_env="OP_CACHE_TEST_KEY"), _tool("echo"))
    assert resolve(reg, Policy(), env={}).offered_names == ("echo",)
    assert resolve(reg, Policy(), env={"OP_CACHE_TEST_KEY": "k"}).offered_names == ("mail", "echo")
    assert resolve(reg, Policy(), env={"OP_CACHE_TEST_KEY": ""}).offered_names == ("echo",)
    # variables no tool requires do not matter
    first = resolve(reg, Policy(), env={"OTHER": "1"})
    assert resolve(reg, Policy(), env={"OTHER": "2"}) is first


def test_registry_mutations_are_seen() -> None:
    reg = _registry(_tool("a"))
    assert resolve(reg, Policy()).offered_names == ("a",)
    reg.register(_tool("b"))
    assert resolve(reg, Policy()).offered_names == ("a", "b")
    reg.register(_tool("a", expose=False), replace=True)
    assert resolve(reg, Policy()).offered_names == ("b",)
    reg.define_toolset("web", ["b"])
    assert resolve(reg, Policy(toolset="web")).offered_names == ("b",)
    reg.define_toolset("web", [])
    assert resolve(reg, Policy(toolset="web")).offered == ()
    reg.unregister("b")
    assert resolve(reg, Policy()).offered == ()


def test_loading_deferred_tools_changes_the_result_and_back() -> None:
    reg = _registry(_tool("big", defer=True), _tool("small"))
    before = resolve(reg, Policy())
    assert before.deferred_names == ("big",)
    after = resolve(reg, Policy(loaded=["big"]))
    assert after.offered_names == ("big", "small")
    assert after.deferred == ()
    assert resolve(reg, Policy()) is before


def test_predicates_of_vetoed_tools_are_never_called() -> None:
    calls: list[str] = []

    def check() -> bool:
        calls.append("x")
        return True

    reg = _registry(_tool("a", check_fn=check, can_use=lambda ctx: calls.append("y") or True))
    for _ in range(3):
        resolve(reg, Policy(deny=["a"]))
        resolve(reg, Policy(toolset="none"))
    assert calls == []


def test_the_cache_does_not_keep_a_registry_alive() -> None:
    reg = _registry(_tool("a"))
    resolve(reg, Policy())
    ref = weakref.ref(reg)
    del reg
    gc.collect()
    assert ref() is None


def test_a_tool_list_is_resolved_once_and_reused_until_the_policy_changes() -> None:
    def spec(name: str) -> Tool:
        return Tool(name=name, execute=lambda args: name, parameters={"type": "object"})

    tools = [spec("a"), spec("b")]
    first = resolve(tools, Policy())
    assert resolve(list(tools), Policy()) is first  # same items, same policy: the cached answer
    denied = resolve(tools, Policy(deny=["a"]))
    assert denied is not first
    assert denied.offered_names == ("b",)
    other = [spec("a"), spec("b")]  # equal names, different tools: never confused with the first
    assert resolve(other, Policy()).offered == tuple(other)
