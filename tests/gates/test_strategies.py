"""The public hypothesis strategies: valid values, the whole metadata space reachable."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openprogram.gates import GateContext, Policy, resolve
from openprogram.registry import LazyTool, Registry
from openprogram.testing.strategies import (
    BROKEN_TARGET,
    DEFAULT_NAMES,
    DEFAULT_SOURCES,
    Always,
    Raises,
    Scenario,
    SourceIn,
    can_use_predicates,
    describe,
    environments,
    lazy_tools,
    policies,
    policies_for,
    registries,
    scenarios,
    tool_lists,
    tools,
)
from openprogram.tools import Tool


def _reach(strategy: st.SearchStrategy[Any], *conditions: Any) -> list[Any]:
    """One drawn example satisfying each condition (deterministic run, no shrinking)."""
    found: dict[int, Any] = {}

    @settings(max_examples=300, derandomize=True, database=None, deadline=None)
    @given(strategy)
    def collect(value: Any) -> None:
        for i, condition in enumerate(conditions):
            if i not in found and condition(value):
                found[i] = value

    collect()
    missing = [i for i in range(len(conditions)) if i not in found]
    assert not missing, f"conditions {missing} never met in 300 examples"
    return [found[i] for i in range(len(conditions))]


def test_tools_reach_every_kind_of_gate_metadata() -> None:
    _reach(
        tools(),
        lambda t: not t.expose,
        lambda t: t.defer and t.toolset and t.unsafe_in,
        lambda t: t.requires_env,
        lambda t: isinstance(t.check_fn, Raises),
        lambda t: isinstance(t.check_fn, Always) and not t.check_fn(),
        lambda t: isinstance(t.can_use, SourceIn) and t.can_use.sources,
    )


@given(tools(predicates=False))
def test_tools_without_predicates(tool: Tool) -> None:
    assert tool.check_fn is None
    assert tool.can_use is None


def test_lazy_tools_are_fresh_unloaded_cards_good_or_broken() -> None:
    broken, _ = _reach(
        lazy_tools(),
        lambda t: t.target == BROKEN_TARGET,
        lambda t: t.target != BROKEN_TARGET and t.defer,
    )
    assert isinstance(broken, LazyTool)
    assert not broken.is_loaded


@given(tool_lists(lazy=True))
def test_tool_lists_have_distinct_names(drawn: list[Tool]) -> None:
    assert len({t.name for t in drawn}) == len(drawn)
    assert all(t.name in DEFAULT_NAMES for t in drawn)


def test_policies_reach_every_field() -> None:
    _reach(
        policies(),
        lambda p: p.toolset == "none",
        lambda p: p.allow is not None and p.deny & p.allow,
        lambda p: not p.only_available and p.loaded and p.disabled,
        lambda p: p.source is not None and p.inherited_sources,
    )
    [fixed] = _reach(policies(only_available=False, names=["only"]), lambda p: p.deny)
    assert fixed.deny == {"only"}
    assert fixed.only_available is False


@given(scenarios(lazy=True))
def test_scenarios_always_resolve(s: Scenario) -> None:
    declared = {ts for t in s.tools for ts in t.toolset}
    assert s.policy.toolset in declared | {None, "none"}
    resolve(s.tools, s.policy, s.env)


def test_scenario_repr_shows_all_gate_metadata() -> None:
    tool = Tool(
        name="t",
        execute=lambda args: None,
        toolset="web",
        unsafe_in="chat",
        requires_env="K",
        check_fn=Raises(),
        can_use=SourceIn(["cli"]),
        defer=True,
        expose=False,
    )
    text = repr(Scenario(tools=[tool], policy=Policy(deny=["t"]), env={}))
    assert describe(tool) in text
    assert describe(tool) == (
        "Tool('t', toolset=['web'], unsafe_in=['chat'], requires_env=['K'], expose=False, "
        "defer=True, check_fn=Raises(), can_use=SourceIn(['cli']))"
    )
    assert "Policy(deny=['t'])" in text


def test_environments_set_empty_or_leave_out_each_variable() -> None:
    _reach(
        environments(["A"]),
        lambda env: env == {},
        lambda env: env == {"A": ""},
        lambda env: env == {"A": "1"},
    )


def test_registries_sometimes_define_toolsets() -> None:
    [reg] = _reach(registries(), lambda r: len(r) > 1 and r.snapshot().defined_toolsets)
    assert isinstance(reg, Registry)


def test_policies_for_aim_at_a_registry() -> None:
    reg = Registry()
    reg.register(Tool(name="mine", execute=lambda args: None, toolset="custom"))
    _reach(
        policies_for(reg, sources=["slack"]),
        lambda p: p.toolset == "custom",
        lambda p: p.source == "slack",
    )
    [found] = _reach(policies_for(reg, extra_names=["ghost"]), lambda p: len(p.deny) == 2)
    assert found.deny == {"mine", "ghost"}


@given(policies_for(Registry()))
def test_policies_for_apply_availability_rules_by_default(policy: Policy) -> None:
    assert policy.only_available


def test_policies_for_can_also_draw_an_admin_listing() -> None:
    reg = Registry()
    _reach(policies_for(reg, only_available=None), lambda p: not p.only_available)
    [admin] = _reach(policies_for(reg, only_available=False), lambda p: True)
    assert not admin.only_available


def test_policies_for_draw_the_registrys_own_channels() -> None:
    reg = Registry()
    reg.register(Tool(name="mine", execute=lambda args: None, unsafe_in=["telegram"]))
    _reach(
        policies_for(reg),
        lambda p: p.source == "telegram",
        lambda p: p.inherited_sources == {"telegram"},
        lambda p: p.source in DEFAULT_SOURCES,
    )


@given(policies_for(Registry(), nested=False))
def test_policies_for_without_nesting_have_one_channel_at_most(policy: Policy) -> None:
    assert policy.inherited_sources == frozenset()


def test_predicates_behave_as_named() -> None:
    ctx = GateContext(source="cli")
    assert Always(True)() is True
    assert SourceIn(["cli"])(ctx) is True
    assert SourceIn(["web"])(ctx) is False
    with pytest.raises(RuntimeError, match="on purpose"):
        Raises()()


def test_source_in_every_checks_every_source_the_run_came_through() -> None:
    relabelled = GateContext(source="cli", sources=("web", "cli"))
    assert SourceIn(["cli"])(relabelled)  # the innermost source alone is fooled
    assert not SourceIn(["cli"], every=True)(relabelled)
    assert SourceIn(["cli", "web"], every=True)(relabelled)
    assert not SourceIn(["cli"], every=True)(GateContext(source=None))  # no source: refused
    assert repr(SourceIn(["web", "cli"], every=True)) == "SourceIn(['cli', 'web'], every=True)"


def test_can_use_predicates_draws_trail_predicates_only_when_asked() -> None:
    from hypothesis import find
    from hypothesis.errors import NoSuchExample

    found = find(can_use_predicates(every=True), lambda p: isinstance(p, SourceIn) and p.every)
    assert found.every
    with pytest.raises(NoSuchExample):
        find(can_use_predicates(), lambda p: isinstance(p, SourceIn) and p.every)
