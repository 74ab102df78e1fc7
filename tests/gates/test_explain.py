"""explain(): which layer hides a tool and why, consistent with resolve()."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given

from openprogram.exceptions import UserError
from openprogram.gates import NOT_REGISTERED, Policy, Rejection, explain, resolve
from openprogram.registry import Registry, default_registry
from openprogram.testing.strategies import Scenario, scenarios
from openprogram.tools import Tool


def _run(args: Any) -> str:
    return "ok"


def _tool(name: str, **options: Any) -> Tool:
    return Tool(name=name, description=f"{name} tool", execute=_run, **options)


@pytest.fixture
def reg() -> Registry:
    reg = Registry()
    for tool in (
        _tool("search", toolset="web"),
        _tool("internal", expose=False),
        _tool("shell", unsafe_in="chat"),
        _tool("mail", requires_env="OP_EXPLAIN_SMTP"),
        _tool("big", defer=True),
    ):
        reg.register(tool)
    return reg


def test_offered_tools_explain_to_none(reg: Registry) -> None:
    assert explain("search", Policy(), reg, env={}) is None
    assert explain("big", Policy(loaded=["big"]), reg, env={}) is None


def test_each_layer_is_named_with_its_reason(reg: Registry) -> None:
    cases = {
        "internal": (Policy(), "L2 expose"),
        "shell": (Policy(toolset="web"), "L2b toolset"),
        "mail": (Policy(), "L4 availability"),
        "big": (Policy(), "L6 defer"),
        "search": (Policy(deny=["search"]), "L5 veto"),
    }
    for name, (policy, layer) in cases.items():
        verdict = explain(name, policy, reg, env={})
        assert verdict is not None, name
        assert verdict.layer == layer, name
    channel = explain("shell", Policy(source="chat"), reg, env={})
    assert channel == Rejection(
        "L3 channel", "'shell' is declared unsafe_in ['chat'] and this exec serves source 'chat'"
    )


def test_an_unknown_name_says_so_with_suggestions(reg: Registry) -> None:
    verdict = explain("serch", Policy(), reg)
    assert verdict is not None
    assert verdict.layer == NOT_REGISTERED
    assert "no tool named 'serch' among the 5 tools given. Did you mean 'search'?" in verdict.reason
    assert "available_if" in verdict.reason


def test_unknown_toolsets_raise_like_resolve(reg: Registry) -> None:
    with pytest.raises(UserError, match="unknown toolset 'wbe'"):
        explain("search", Policy(toolset="wbe"), reg)
    with pytest.raises(UserError, match=r"Registry\.define_toolset"):
        explain("search", Policy(), reg, toolsets={"x": ["search"]})


def test_tool_lists_and_their_toolsets_work_too() -> None:
    tools = [_tool("fetch"), _tool("shell")]
    assert explain("fetch", Policy(toolset="web"), tools, toolsets={"web": ["fetch"]}) is None
    verdict = explain("shell", Policy(toolset="web"), tools, toolsets={"web": ["fetch"]})
    assert verdict is not None
    assert verdict.layer == "L2b toolset"


@pytest.fixture
def in_default_registry() -> Iterator[str]:
    name = "explain_default_registry_probe"
    default_registry.register(_tool(name, expose=False))
    try:
        yield name
    finally:
        default_registry.unregister(name)


def test_the_default_registry_is_used_without_tools(in_default_registry: str) -> None:
    verdict = explain(in_default_registry, Policy())
    assert verdict is not None
    assert verdict.layer == "L2 expose"


@given(scenarios(lazy=True))
def test_explain_agrees_with_resolve_for_every_tool(s: Scenario) -> None:
    res = resolve(s.tools, s.policy, s.env)
    for tool in s.tools:
        verdict = explain(tool.name, s.policy, s.tools, env=s.env)
        if tool.name in res.offered_names:
            assert verdict is None
        elif tool.name in res.deferred_names:
            assert verdict is not None
            assert verdict.layer == "L6 defer"
        else:
            assert verdict == res.rejected[tool.name]
