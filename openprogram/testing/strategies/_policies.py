"""Strategies for policies (aimed at a vocabulary or at your registry) and environments."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from hypothesis import strategies as st

from openprogram.gates import Policy
from openprogram.registry import Registry
from openprogram.testing.strategies._vocabulary import (
    DEFAULT_ENV_VARS,
    DEFAULT_NAMES,
    DEFAULT_SOURCES,
    DEFAULT_TOOLSETS,
    subsets,
)

__all__ = ["environments", "policies", "policies_for"]


def environments(env_vars: Sequence[str] = DEFAULT_ENV_VARS) -> st.SearchStrategy[dict[str, str]]:
    """An environment mapping where each variable is set, empty (counts as unset) or absent."""
    value = st.sampled_from(["1", "", None])
    return st.fixed_dictionaries(dict.fromkeys(env_vars, value)).map(
        lambda env: {k: v for k, v in env.items() if v is not None}
    )


def policies(
    *,
    names: Sequence[str] = DEFAULT_NAMES,
    toolsets: Sequence[str] = DEFAULT_TOOLSETS,
    sources: Sequence[str] = DEFAULT_SOURCES,
    only_available: bool | None = None,
    nested: bool = True,
) -> st.SearchStrategy[Policy]:
    """A ``Policy`` whose names, toolset and sources come from the given vocabulary.

    Args:
        names: Names ``allow``/``deny``/``disabled``/``loaded`` draw from.
        toolsets: Toolsets ``toolset`` draws from (besides ``None`` and ``"none"``).
        sources: Sources ``source`` and ``inherited_sources`` draw from.
        only_available: Fix ``only_available`` (``None``: drawn, mostly ``True``).
        nested: Also draw ``inherited_sources``, the channels of enclosing execs.
    """
    return st.builds(
        Policy,
        toolset=st.sampled_from([None, None, "none", *toolsets]),
        source=st.sampled_from([None, *sources]),
        # Mostly no cap and few vetoes: a rule about one tool needs policies that offer it.
        allow=st.one_of(st.none(), st.none(), st.none(), subsets(names)),
        deny=st.just(()) | subsets(names, max_size=3),
        disabled=st.just(()) | subsets(names, max_size=2),
        only_available=(
            st.sampled_from([True, True, False])
            if only_available is None
            else st.just(only_available)
        ),
        loaded=subsets(names),
        inherited_sources=_enclosing(sources) if nested else st.just(()),
    )


def _enclosing(sources: Sequence[str]) -> st.SearchStrategy[tuple[str, ...]]:
    """No enclosing exec, or one or two that served these channels (as often as none)."""
    if not sources:
        return st.just(())
    some = st.lists(st.sampled_from(tuple(sources)), min_size=1, max_size=2, unique=True)
    return st.just(()) | some.map(tuple)


def policies_for(
    registry: Registry,
    *,
    sources: Sequence[str] | None = None,
    extra_names: Collection[str] = (),
    only_available: bool | None = True,
    nested: bool = True,
) -> st.SearchStrategy[Policy]:
    """Policies aimed at your registry: its tool names, toolsets and channels.

    Every drawn policy applies your availability rules (``check_fn``,
    ``requires_env``, ``can_use``) unless you ask otherwise: they are part of
    what a rule about your program is about.

    Args:
        registry: Your registry (read now; register everything first).
        sources: The channels your program serves (``source`` and the enclosing
            execs' sources draw from); default: every channel a registered tool
            names in ``unsafe_in``, plus ``DEFAULT_SOURCES``.
        extra_names: More names to mention (e.g. tools you expect to be absent).
        only_available: ``True`` (default): L4 applies, as in every exec;
            ``False``: L4 is off (``Policy(only_available=False)``, an admin
            listing); ``None``: drawn, mostly ``True``.
        nested: Also draw the channels of enclosing execs (``inherited_sources``):
            an exec nested in one that served another channel.
    """
    if sources is None:
        channels = [c for tool in registry.tools() for c in tool.unsafe_in]
        sources = list(dict.fromkeys([*channels, *DEFAULT_SOURCES]))
    return policies(
        names=[*registry.names(), *extra_names],
        toolsets=list(registry.toolsets()),
        sources=sources,
        only_available=only_available,
        nested=nested,
    )
