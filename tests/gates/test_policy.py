"""Policy: frozen, keyword-only, hashable; narrow() only narrows (law 7's algebra)."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from openprogram.exceptions import UserError
from openprogram.gates import Policy
from openprogram.testing.strategies import policies


def test_iterables_become_frozensets_and_a_string_is_one_name() -> None:
    p = Policy(allow=["a", "b", "a"], deny="shell", disabled=(n for n in ["x"]), loaded={"big"})
    assert p.allow == frozenset({"a", "b"})
    assert p.deny == frozenset({"shell"})
    assert p.disabled == frozenset({"x"})
    assert p.loaded == frozenset({"big"})
    assert Policy().allow is None
    assert Policy(allow=[]).allow == frozenset()


def test_policies_are_frozen_keyword_only_and_hashable() -> None:
    p = Policy(deny=["a", "b"])
    assert p == Policy(deny=["b", "a"])
    assert hash(p) == hash(Policy(deny=("b", "a")))
    assert len({p, Policy(deny=["a", "b"]), Policy()}) == 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.deny = frozenset()  # type: ignore[misc]
    with pytest.raises(TypeError):
        Policy("web")  # type: ignore[misc]


def test_bad_values_are_user_errors_saying_which_field() -> None:
    with pytest.raises(
        UserError, match=r"Policy\(deny=...\): expected tool names \(str\), got \[3\]"
    ):
        Policy(deny=["ok", 3])  # type: ignore[list-item]
    with pytest.raises(UserError, match=r"Policy\(toolset=...\)"):
        Policy(toolset=["web"])  # type: ignore[arg-type]
    with pytest.raises(UserError, match=r"Policy\(only_available=...\)"):
        Policy(only_available="yes")  # type: ignore[arg-type]


def test_replace_changes_fields_and_rejects_unknown_ones() -> None:
    p = Policy(toolset="web", deny=["a"])
    assert p.replace(loaded=["x"]) == Policy(toolset="web", deny=["a"], loaded=["x"])
    with pytest.raises(TypeError, match="unknown field"):
        p.replace(tools=["a"])


def test_repr_shows_only_what_differs_sorted() -> None:
    assert repr(Policy()) == "Policy()"
    assert repr(Policy(deny=["b", "a"], source="web", only_available=False)) == (
        "Policy(source='web', deny=['a', 'b'], only_available=False)"
    )


def test_sources_include_inherited_ones() -> None:
    assert Policy().sources == frozenset()
    assert Policy(source="cli", inherited_sources=["chat"]).sources == {"cli", "chat"}


def test_narrow_unites_vetoes_intersects_allow_and_keeps_sources() -> None:
    outer = Policy(
        source="telegram", allow=["a", "b", "c"], deny=["x"], disabled=["y"], loaded=["d"]
    )
    inner = Policy(toolset="web", source="cli", allow=["b", "c", "z"], deny=["c"], loaded=["e"])
    got = outer.narrow(inner)
    assert got.toolset == "web"
    assert got.allow == {"b", "c"}
    assert got.deny == {"x", "c"}
    assert got.disabled == {"y"}
    assert got.source == "cli"
    assert got.sources == {"cli", "telegram"}
    assert got.loaded == {"d", "e"}


def test_narrow_none_allow_means_no_cap_on_either_side() -> None:
    assert Policy().narrow(Policy(allow=["a"])).allow == {"a"}
    assert Policy(allow=["a"]).narrow(Policy()).allow == {"a"}
    assert Policy().narrow(Policy()).allow is None


def test_narrow_keeps_the_outer_source_when_the_inner_has_none() -> None:
    got = Policy(source="chat").narrow(Policy())
    assert got.source == "chat"
    assert got.sources == {"chat"}
    assert Policy(only_available=True).narrow(Policy(only_available=False)).only_available


@given(policies(), policies(), policies())
def test_narrow_never_widens_and_is_associative(a: Policy, b: Policy, c: Policy) -> None:
    ab = a.narrow(b)
    assert ab.deny >= a.deny | b.deny
    assert ab.disabled >= a.disabled | b.disabled
    assert ab.sources >= a.sources | b.sources
    for side in (a, b):
        if side.allow is not None:
            assert ab.allow is not None
            assert ab.allow <= side.allow
    assert ab.only_available >= a.only_available
    left, right = ab.narrow(c), a.narrow(b.narrow(c))
    assert (left.allow, left.deny, left.disabled, left.sources, left.toolset) == (
        right.allow,
        right.deny,
        right.disabled,
        right.sources,
        right.toolset,
    )


@given(policies(), st.sampled_from([None, "web", "none"]))
def test_narrowing_by_an_empty_inner_policy_keeps_every_veto(
    outer: Policy, toolset: str | None
) -> None:
    got = outer.narrow(Policy(toolset=toolset))
    assert (got.allow, got.deny, got.disabled, got.sources) == (
        outer.allow,
        outer.deny,
        outer.disabled,
        outer.sources,
    )
    assert got.toolset == toolset


_chain = st.lists(st.sampled_from(["cli", "web", "chat", "public"]) | st.none(), max_size=6)


@given(_chain)
def test_the_source_trail_lists_every_source_in_force_innermost_last(
    chain: list[str | None],
) -> None:
    policy = Policy()
    for source in chain:
        policy = policy.narrow(Policy(source=source))
    trail = policy.source_trail
    assert set(trail) == policy.sources
    assert len(trail) == len(set(trail))
    assert trail[-1:] == ((policy.source,) if policy.source is not None else ())
    met = [s for s in chain if s is not None]
    assert list(trail) == sorted(
        set(met), key=lambda s: max(i for i, m in enumerate(met) if m == s)
    )
    assert policy.replace(loaded=["x"]).source_trail == trail


def test_inherited_sources_keep_their_order_even_from_an_iterator() -> None:
    policy = Policy(source="c", inherited_sources=(s for s in ["b", "a"]))
    assert policy.source_trail == ("b", "a", "c")
    assert policy.inherited_sources == frozenset({"a", "b"})
    assert Policy(inherited_sources={"b", "a"}).source_trail == ("a", "b")
    with pytest.raises(UserError, match="inherited_sources"):
        Policy(inherited_sources=[1])  # type: ignore[list-item]
