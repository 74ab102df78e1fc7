"""Each layer on its own (through the public ``LAYERS``), then through ``resolve``."""

from __future__ import annotations

from typing import Any

import pytest

from openprogram.gates import (
    L2_EXPOSE,
    L2B_TOOLSET,
    L3_CHANNEL,
    L4_AVAILABILITY,
    L5_VETO,
    L6_DEFER,
    LAYER_NAMES,
    LAYERS,
    PASS,
    GateContext,
    GateInput,
    Policy,
    Rejection,
    resolve,
)
from openprogram.tools import Tool

GATE = dict(LAYERS)


def _run(args: Any) -> str:
    return "ok"


def _tool(name: str = "t", **options: Any) -> Tool:
    return Tool(name=name, description=f"{name} tool", execute=_run, **options)


def _in(
    policy: Policy | None = None,
    env: dict[str, str] | None = None,
    deps: Any = None,
    toolsets: dict[str, frozenset[str]] | None = None,
) -> GateInput:
    policy = policy or Policy()
    ctx = GateContext(source=policy.source, deps=deps, env=env or {})
    return GateInput(policy, ctx, toolsets or {})


def test_layers_are_listed_once_in_their_documented_order() -> None:
    assert [name for name, _ in LAYERS] == [
        L2_EXPOSE,
        L2B_TOOLSET,
        L3_CHANNEL,
        L5_VETO,
        L4_AVAILABILITY,
        L6_DEFER,
    ]
    assert set(LAYER_NAMES) == set(GATE)


def test_every_layer_passes_a_default_tool_under_the_default_policy() -> None:
    for name, gate in LAYERS:
        assert gate(_tool(), _in()) is PASS, name


# -- L2 expose -----------------------------------------------------------------------------------


def test_l2_rejects_unexposed_tools() -> None:
    verdict = GATE[L2_EXPOSE](_tool(expose=False), _in())
    assert isinstance(verdict, Rejection)
    assert verdict.layer == L2_EXPOSE
    assert "expose=False" in verdict.reason


# -- L2b toolset ---------------------------------------------------------------------------------


def test_l2b_none_offers_all_and_the_none_toolset_offers_nothing() -> None:
    gate = GATE[L2B_TOOLSET]
    assert gate(_tool(), _in(Policy(toolset=None))) is PASS
    verdict = gate(_tool(toolset="none"), _in(Policy(toolset="none")))
    assert verdict == Rejection(
        L2B_TOOLSET, "toolset='none' offers no tools (a pure reasoning call)"
    )


def test_l2b_a_name_keeps_declared_and_defined_members() -> None:
    gate = GATE[L2B_TOOLSET]
    web = Policy(toolset="web")
    assert gate(_tool(toolset=("files", "web")), _in(web)) is PASS
    assert gate(_tool("fetch"), _in(web, toolsets={"web": frozenset({"fetch"})})) is PASS
    verdict = gate(_tool("shell", toolset="ops"), _in(web))
    assert verdict is not None
    assert verdict.reason == (
        "'shell' is not a member of toolset 'web' (its toolsets: ['ops']); add it with "
        "toolset='web' or Registry.define_toolset"
    )


# -- L3 channel ----------------------------------------------------------------------------------


def test_l3_hides_tools_unsafe_in_the_source() -> None:
    gate = GATE[L3_CHANNEL]
    shell = _tool("shell", unsafe_in=("telegram", "web"))
    assert gate(shell, _in(Policy(source="cli"))) is PASS
    assert gate(shell, _in(Policy())) is PASS
    verdict = gate(shell, _in(Policy(source="telegram")))
    assert verdict is not None
    assert verdict.layer == L3_CHANNEL
    assert "'telegram'" in verdict.reason


def test_l3_also_hides_tools_unsafe_in_an_inherited_source() -> None:
    policy = Policy(source="cli", inherited_sources=["telegram"])
    assert GATE[L3_CHANNEL](_tool(unsafe_in="telegram"), _in(policy)) is not None


# -- L4 availability ------------------------------------------------------------------------------


def test_l4_requires_env_variables_set_and_non_empty() -> None:
    gate = GATE[L4_AVAILABILITY]
    tool = _tool("mail", requires_env=("SMTP_HOST", "SMTP_KEY"))
    assert gate(tool, _in(env={"SMTP_HOST": "h", "SMTP_KEY": "k"})) is PASS
    verdict = gate(tool, _in(env={"SMTP_HOST": "h", "SMTP_KEY": ""}))
    assert verdict is not None
    assert verdict.reason == (
        "'mail' requires the environment variable(s) SMTP_KEY, unset or empty; "
        "set them to enable it"
    )


def test_l4_check_fn_false_or_raising_hides_the_tool() -> None:
    gate = GATE[L4_AVAILABILITY]
    assert gate(_tool(check_fn=lambda: True), _in()) is PASS
    assert gate(_tool(check_fn=lambda: 0), _in()) == Rejection(
        L4_AVAILABILITY, "'t' is unavailable: its check_fn() returned 0"
    )

    def broken() -> bool:
        raise ConnectionError("docker daemon not running")

    verdict = gate(_tool(check_fn=broken), _in())
    assert verdict == Rejection(
        L4_AVAILABILITY,
        "'t' is hidden because its check_fn() raised ConnectionError: docker daemon not running",
    )


def test_l4_can_use_receives_source_deps_and_env() -> None:
    seen: list[GateContext] = []

    def can_use(ctx: GateContext) -> bool:
        seen.append(ctx)
        return bool(ctx.deps["admin"])

    tool = _tool(can_use=can_use)
    policy = Policy(source="web")
    assert GATE[L4_AVAILABILITY](tool, _in(policy, env={"A": "1"}, deps={"admin": True})) is PASS
    assert seen[0].source == "web"
    assert seen[0].env == {"A": "1"}
    verdict = GATE[L4_AVAILABILITY](tool, _in(policy, deps={"admin": False}))
    assert verdict is not None
    assert "can_use(ctx) returned False" in verdict.reason
    raising = GATE[L4_AVAILABILITY](tool, _in(policy, deps={}))
    assert raising is not None
    assert "can_use(ctx) raised KeyError" in raising.reason


def test_l4_is_skipped_entirely_when_only_available_is_false() -> None:
    def never() -> bool:
        raise AssertionError("must not be called")

    tool = _tool(requires_env="NOPE", check_fn=never, can_use=never)
    assert GATE[L4_AVAILABILITY](tool, _in(Policy(only_available=False))) is PASS


def test_l4_a_keyboard_interrupt_is_not_swallowed() -> None:
    def interrupted() -> bool:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        GATE[L4_AVAILABILITY](_tool(check_fn=interrupted), _in())


# -- L5 veto -------------------------------------------------------------------------------------


def test_l5_deny_disabled_and_allow_cap() -> None:
    gate = GATE[L5_VETO]
    t = _tool("shell")
    assert gate(t, _in(Policy(allow=["shell"]))) is PASS
    assert gate(t, _in(Policy(deny=["shell"], allow=["shell"]))) == Rejection(
        L5_VETO, "'shell' is in the policy's deny list"
    )
    assert gate(t, _in(Policy(disabled=["shell"]))) == Rejection(L5_VETO, "'shell' is disabled")
    capped = gate(t, _in(Policy(allow=["search"])))
    assert capped is not None
    assert "not in the allow list" in capped.reason
    assert gate(t, _in(Policy(allow=[]))) is not None


def test_l5_deny_names_tools_not_toolsets() -> None:
    assert GATE[L5_VETO](_tool("fetch", toolset="web"), _in(Policy(deny=["web"]))) is PASS


# -- L6 defer ------------------------------------------------------------------------------------


def test_l6_defers_until_loaded() -> None:
    gate = GATE[L6_DEFER]
    tool = _tool("big", defer=True)
    verdict = gate(tool, _in())
    assert verdict is not None
    assert verdict.layer == L6_DEFER
    assert gate(tool, _in(Policy(loaded=["big"]))) is PASS
    assert gate(_tool("eager"), _in()) is PASS


# -- the same layers through resolve ---------------------------------------------------------------


def test_resolve_reports_the_first_failing_layer_in_order() -> None:
    calls: list[str] = []

    def check() -> bool:
        calls.append("called")
        return False

    tools = [
        _tool("a", expose=False, defer=True),
        _tool("b", toolset="x", unsafe_in="web"),
        _tool("c", unsafe_in="web", check_fn=check),
        _tool("d", check_fn=check),
        _tool("e", defer=True),
        _tool("f", toolset="x"),
    ]
    res = resolve(tools, Policy(toolset=None, source="web", deny=["d"]), env={})
    assert res.offered_names == ("f",)
    assert res.deferred_names == ("e",)
    assert {name: r.layer for name, r in res.rejected.items()} == {
        "a": L2_EXPOSE,
        "b": L3_CHANNEL,
        "c": L3_CHANNEL,
        "d": L5_VETO,
    }
    assert calls == []  # predicates of tools already hidden or vetoed never run
