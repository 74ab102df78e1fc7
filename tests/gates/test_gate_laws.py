"""The gating laws 1-6 of docs/gates.md (and law 7's policy algebra) as hypothesis properties.

Each property draws tools, a policy and an environment with the public
strategies of ``openprogram.testing.strategies`` and checks the real
``resolve`` against the reference model in ``gates_reference``.
"""

from __future__ import annotations

import random

from gates_reference import reference
from hypothesis import given, settings
from hypothesis import strategies as st

from openprogram.gates import LAYERS, GateContext, GateInput, Policy, Resolution, resolve
from openprogram.registry import LazyTool, Registry
from openprogram.testing.strategies import (
    DEFAULT_NAMES,
    Scenario,
    policies,
    registries,
    scenarios,
)

LAWS = settings(deadline=None)  # user predicates and imports make timing noisy on CI


def _sets(res: Resolution) -> tuple[set[str], set[str]]:
    return set(res.offered_names), set(res.deferred_names)


def _resolve(s: Scenario, policy: Policy | None = None) -> Resolution:
    return resolve(s.tools, policy or s.policy, s.env)


def _known(s: Scenario) -> dict[str, tuple[str, ...]]:
    """The scenario's toolsets, so re-resolving a subset keeps them known."""
    return {ts: () for tool in s.tools for ts in tool.toolset}


# -- law 1: offered ⊆ exposed ∩ every layer; independent of layer and registration order ----


@LAWS
@given(scenarios(lazy=True))
def test_law1_resolution_matches_the_reference_model(s: Scenario) -> None:
    assert _sets(_resolve(s)) == reference(s.tools, s.policy, s.env)


@LAWS
@given(scenarios(), st.permutations(range(len(LAYERS))))
def test_law1_the_passing_set_does_not_depend_on_layer_order(s: Scenario, order: list[int]) -> None:
    given_ = GateInput(s.policy, GateContext(source=s.policy.source, env=s.env))
    hiding = [LAYERS[i][1] for i in order if LAYERS[i][0] != "L6 defer"]
    passing = {t.name for t in s.tools if all(gate(t, given_) is None for gate in hiding)}
    offered, deferred = _sets(_resolve(s))
    assert passing == offered | deferred


@LAWS
@given(scenarios(lazy=True), st.randoms(use_true_random=False))
def test_law1_sets_do_not_depend_on_registration_order_and_listing_follows_it(
    s: Scenario, rnd: random.Random
) -> None:
    shuffled = list(s.tools)
    rnd.shuffle(shuffled)
    first, second = _resolve(s), resolve(shuffled, s.policy, s.env)
    assert _sets(first) == _sets(second)
    for res, order in ((first, s.tools), (second, shuffled)):
        position = {t.name: i for i, t in enumerate(order)}
        for listed in (res.offered_names, res.deferred_names, tuple(res.rejected)):
            assert [position[n] for n in listed] == sorted(position[n] for n in listed)


# -- law 2: deny wins over allow, toolset, loaded and an explicit tools= list -------------------


@LAWS
@given(scenarios(), st.data())
def test_law2_deny_wins_over_everything(s: Scenario, data: st.DataObject) -> None:
    if not s.tools:
        return
    victim = data.draw(st.sampled_from(s.tools))
    policy = s.policy.replace(
        deny=s.policy.deny | {victim.name},
        allow=(s.policy.allow or frozenset()) | {victim.name},
        loaded=s.policy.loaded | {victim.name},
    )
    res = _resolve(s, policy)
    assert victim.name not in res.offered_names + res.deferred_names
    assert victim.name in res.rejected


# -- law 3: growing deny/disabled or shrinking allow never adds a tool ------------------------


@LAWS
@given(scenarios(), st.data())
def test_law3_vetoes_are_monotone(s: Scenario, data: st.DataObject) -> None:
    more = st.sets(st.sampled_from(DEFAULT_NAMES))
    base_allow = s.policy.allow if s.policy.allow is not None else frozenset(DEFAULT_NAMES)
    narrower = s.policy.replace(
        deny=s.policy.deny | data.draw(more),
        disabled=s.policy.disabled | data.draw(more),
        allow=data.draw(st.sets(st.sampled_from(sorted(base_allow)))) if base_allow else (),
    )
    offered, deferred = _sets(_resolve(s))
    offered2, deferred2 = _sets(_resolve(s, narrower))
    assert offered2 <= offered
    assert deferred2 <= deferred


# -- law 4: resolving the offered set again changes nothing --------------------------------------


@LAWS
@given(scenarios(lazy=True))
def test_law4_resolution_is_idempotent(s: Scenario) -> None:
    first = _resolve(s)
    again = resolve(first.offered, s.policy, s.env, toolsets=_known(s))
    assert again.offered == first.offered
    assert again.deferred == ()
    assert dict(again.rejected) == {}


# -- law 5: expose=False is never offered; toolset="none" offers nothing -------------------------


@LAWS
@given(scenarios(lazy=True))
def test_law5_hidden_tools_and_the_none_toolset(s: Scenario) -> None:
    res = _resolve(s)
    assert all(t.expose for t in res.offered + res.deferred)
    nothing = _resolve(s, s.policy.replace(toolset="none"))
    assert nothing.offered == nothing.deferred == ()
    assert set(nothing.rejected) == {t.name for t in s.tools}


# -- law 6: a deferred tool's schema is never sent before it is loaded ----------------------------


@LAWS
@given(scenarios(lazy=True))
def test_law6_deferred_schemas_wait_for_loading(s: Scenario) -> None:
    res = _resolve(s)
    for tool in res.offered:
        assert not tool.defer or tool.name in s.policy.loaded
    for tool in res.deferred:
        assert tool.name not in s.policy.loaded
        # catalog only: a deferred lazy card has not even been imported
        assert not isinstance(tool, LazyTool) or not tool.is_loaded


# -- law 7 (policy algebra): narrowing never widens ------------------------------------------------


@LAWS
@given(scenarios(), policies())
def test_law7_a_narrowed_policy_offers_no_more_than_either_side(s: Scenario, inner: Policy) -> None:
    declared = {ts for t in s.tools for ts in t.toolset}
    if inner.toolset not in declared | {None, "none"}:
        inner = inner.replace(toolset=None)
    outer = s.policy
    combined = outer.narrow(inner)
    # can_use(ctx) sees the innermost source, so compare under the same one.
    same = {"loaded": outer.loaded | inner.loaded, "source": combined.source}
    offered, deferred = _sets(_resolve(s, combined))
    inner_alone = _sets(_resolve(s, inner.replace(**same)))
    outer_vetoes = _sets(_resolve(s, outer.replace(toolset=inner.toolset, **same)))
    assert offered <= inner_alone[0]
    assert offered <= outer_vetoes[0]
    assert deferred <= inner_alone[1]
    assert deferred <= outer_vetoes[1]
    assert not (offered | deferred) & (outer.deny | outer.disabled)


# -- a registry resolves like the same tools given as a list, cached or not ------------------------


@LAWS
@given(registries(lazy=True), policies(), st.data())
def test_registry_resolution_equals_list_resolution(
    registry: Registry, policy: Policy, data: st.DataObject
) -> None:
    known = registry.toolsets()
    if policy.toolset not in {*known, None, "none"}:
        policy = policy.replace(toolset=None)
    env = data.draw(st.fixed_dictionaries({"OPENPROGRAM_TEST_KEY_A": st.sampled_from(["", "1"])}))
    defined = registry.snapshot().defined_toolsets
    from_list = resolve(registry.tools(), policy, env, toolsets=defined)
    first = resolve(registry, policy, env)
    cached = resolve(registry, policy, env)
    assert first.offered == from_list.offered == cached.offered
    assert first.deferred == from_list.deferred == cached.deferred
    assert dict(first.rejected) == dict(from_list.rejected) == dict(cached.rejected)
    assert _sets(first) == reference(registry.tools(), policy, env, defined=defined)
