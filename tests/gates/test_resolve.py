"""resolve(): inputs, ordering, toolsets, errors, environment and deps."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import pytest

from openprogram.exceptions import UserError
from openprogram.gates import GateContext, Policy, Rejection, resolve
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


def test_listing_follows_registration_order_not_names() -> None:
    reg = _registry(
        _tool("z"), _tool("b", defer=True), _tool("a"), _tool("y", defer=True), _tool("m")
    )
    reg.register(_tool("hidden2", expose=False))
    reg.register(_tool("hidden1", expose=False))
    res = resolve(reg, Policy())
    assert res.offered_names == ("z", "a", "m")
    assert res.deferred_names == ("b", "y")
    assert list(res.rejected) == ["hidden2", "hidden1"]
    assert [s["name"] for s in res.specs] == ["z", "a", "m"]


def test_resolution_is_frozen_and_its_rejections_read_only() -> None:
    res = resolve([_tool("a", expose=False)], Policy())
    assert isinstance(res.rejected, MappingProxyType)
    with pytest.raises(TypeError):
        res.rejected["b"] = Rejection("x", "y")  # type: ignore[index]
    with pytest.raises(AttributeError):
        res.offered = ()  # type: ignore[misc]


def test_unknown_toolset_is_a_user_error_naming_the_known_ones() -> None:
    reg = _registry(_tool("fetch", toolset="web", expose=False), _tool("ls", toolset="files"))
    reg.define_toolset("ops", ["ls"])
    with pytest.raises(UserError) as info:
        resolve(reg, Policy(toolset="wbe"))
    assert str(info.value).startswith(
        "unknown toolset 'wbe': known toolsets are 'files', 'ops', 'web'."
    )
    with pytest.raises(UserError, match=r"known toolsets are \(none defined\)"):
        resolve([_tool("a")], Policy(toolset="web"))


def test_a_toolset_declared_only_by_hidden_tools_is_known_and_offers_nothing() -> None:
    reg = _registry(_tool("fetch", toolset="web", expose=False), _tool("ls"))
    res = resolve(reg, Policy(toolset="web"))
    assert res.offered == ()
    assert res.rejected["fetch"].layer == "L2 expose"


def test_registry_defined_toolsets_select_members() -> None:
    reg = _registry(_tool("fetch"), _tool("search", toolset="web"), _tool("shell"))
    reg.define_toolset("web", ["fetch"])
    assert resolve(reg, Policy(toolset="web")).offered_names == ("fetch", "search")
    assert resolve(reg, Policy(toolset="none")).offered == ()


def test_toolsets_argument_defines_presets_for_tool_lists() -> None:
    tools = [_tool("fetch"), _tool("shell")]
    assert resolve(tools, Policy(toolset="web"), toolsets={"web": ["fetch"]}).offered_names == (
        "fetch",
    )
    assert resolve(tools, Policy(toolset="one"), toolsets={"one": "shell"}).offered_names == (
        "shell",
    )
    with pytest.raises(UserError, match=r"Registry\.define_toolset"):
        resolve(_registry(_tool("a")), Policy(), toolsets={"web": ["a"]})


def test_tool_lists_accept_tool_likes_and_reject_clashing_names() -> None:
    spec = {"spec": {"name": "echo", "description": "Echo."}, "execute": _run}
    shared = _tool("same")
    assert resolve([spec, shared, shared], Policy()).offered_names == ("echo", "same")
    clash = [_tool("dup", origin="pkg.one"), _tool("dup", origin="pkg.two")]
    with pytest.raises(UserError, match=r"two different tools are named 'dup'.*pkg\.one.*pkg\.two"):
        resolve(clash, Policy())
    with pytest.raises(TypeError, match="list of tools"):
        resolve("search", Policy())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="policy must be a Policy"):
        resolve([], {"deny": ["x"]})  # type: ignore[arg-type]


def test_env_defaults_to_os_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    tools = [_tool("mail", requires_env="OP_TEST_SMTP_KEY")]
    monkeypatch.delenv("OP_TEST_SMTP_KEY", raising=False)
    assert resolve(tools, Policy()).offered == ()
    monkeypatch.setenv("OP_TEST_SMTP_KEY", "secret")
    assert resolve(tools, Policy()).offered_names == ("mail",)
    assert resolve(tools, Policy(), env={}).offered == ()


def test_deps_and_env_reach_can_use() -> None:
    seen: list[GateContext] = []

    def can_use(ctx: GateContext) -> bool:
        seen.append(ctx)
        return ctx.deps == "admin"

    reg = _registry(_tool("admin_only", can_use=can_use))
    assert resolve(reg, Policy(source="web"), env={"K": "v"}, deps="admin").offered_names == (
        "admin_only",
    )
    assert seen[-1] == GateContext(source="web", deps="admin", env={"K": "v"})
    assert resolve(reg, Policy(source="web"), env={}, deps="guest").offered == ()


def test_only_available_false_offers_unavailable_tools() -> None:
    reg = _registry(_tool("a", requires_env="NOT_SET_ANYWHERE_X", check_fn=lambda: False))
    assert resolve(reg, Policy(), env={}).offered == ()
    assert resolve(reg, Policy(only_available=False), env={}).offered_names == ("a",)


def test_loaded_names_only_move_deferred_tools_that_pass_every_layer() -> None:
    reg = _registry(_tool("big", defer=True), _tool("secret", defer=True, expose=False))
    res = resolve(reg, Policy(loaded=["big", "secret", "ghost"]))
    assert res.offered_names == ("big",)
    assert res.deferred == ()
    assert "secret" in res.rejected


def test_an_empty_registry_and_an_empty_list_resolve_to_nothing() -> None:
    for tools in (Registry(), []):
        res = resolve(tools, Policy())
        assert (res.offered, res.deferred, dict(res.rejected)) == ((), (), {})
