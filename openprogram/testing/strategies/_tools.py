"""Strategies for tools: names, predicates, and tools and lazy cards with their gate metadata."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hypothesis import strategies as st

from openprogram.gates import GateContext
from openprogram.registry import LazyTool
from openprogram.testing.strategies._gate_parts import Always, Raises, SourceIn
from openprogram.testing.strategies._vocabulary import (
    DEFAULT_ENV_VARS,
    DEFAULT_NAMES,
    DEFAULT_SOURCES,
    DEFAULT_TOOLSETS,
    subsets,
)
from openprogram.tools import Tool

__all__ = [
    "BROKEN_TARGET",
    "SAMPLE_TARGET",
    "can_use_predicates",
    "check_fns",
    "lazy_tools",
    "sample_tool",
    "tool_lists",
    "tool_names",
    "tools",
]

SAMPLE_TARGET = "openprogram.testing.strategies:sample_tool"
"""A lazy-card target that imports fine."""
BROKEN_TARGET = "openprogram_strategies_missing_module:tool"
"""A lazy-card target whose import fails (the card must be rejected, never raise)."""


def _echo(args: Mapping[str, Any]) -> str:
    return str(dict(args))


sample_tool = Tool(name="sample_tool", description="Echo the arguments.", execute=_echo)
"""What ``SAMPLE_TARGET`` loads."""


_EXPOSE = st.sampled_from([True, True, True, False])
"""Mostly exposed: hidden tools are interesting, but rarer."""


def tool_names(names: Sequence[str] = DEFAULT_NAMES) -> st.SearchStrategy[str]:
    """One of ``names``."""
    return st.sampled_from(tuple(names))


def check_fns() -> st.SearchStrategy[Callable[[], bool] | None]:
    """``None`` (most often), ``Always(True)``, ``Always(False)`` or ``Raises()``."""
    return st.sampled_from([None, None, Always(True), Always(False), Raises()])


def can_use_predicates(
    sources: Sequence[str] = DEFAULT_SOURCES, *, every: bool = False
) -> st.SearchStrategy[Callable[[GateContext], bool] | None]:
    """``None`` (most often), a constant, ``Raises()`` or ``SourceIn(some sources)``.

    Args:
        sources: The sources ``SourceIn`` draws from.
        every: Also draw ``SourceIn(..., every=True)``, predicates over every
            source the run came through (``ctx.sources``).
    """
    source_in = subsets(sources).map(SourceIn)
    if every:
        trail = subsets(sources).map(functools.partial(SourceIn, every=True))
        source_in = st.one_of(source_in, trail, trail)
    return st.one_of(
        st.just(None),
        st.just(None),
        st.sampled_from([Always(True), Always(False), Raises()]),
        source_in,
    )


def _make_tool(name: str, **metadata: Any) -> Tool:
    return Tool(name=name, description=f"{name.replace('_', ' ')} tool", execute=_echo, **metadata)


def _make_card(name: str, **metadata: Any) -> LazyTool:
    return LazyTool(name=name, description=f"{name.replace('_', ' ')} (lazy)", **metadata)


_Factory = Callable[[str], Tool]
"""A drawn tool minus its name: lists draw distinct names first, then one factory per name."""


def _tool_factories(
    toolsets: Sequence[str],
    sources: Sequence[str],
    env_vars: Sequence[str],
    predicates: bool,
) -> st.SearchStrategy[_Factory]:
    no_predicate: st.SearchStrategy[Any] = st.none()
    return st.builds(
        functools.partial,
        st.just(_make_tool),
        expose=_EXPOSE,
        toolset=subsets(toolsets),
        unsafe_in=subsets(sources, max_size=2),
        requires_env=subsets(env_vars, max_size=1),
        check_fn=check_fns() if predicates else no_predicate,
        can_use=can_use_predicates(sources) if predicates else no_predicate,
        defer=st.booleans(),
        summary=st.none() | st.just("a summary line"),
    )


def _card_factories(toolsets: Sequence[str], sources: Sequence[str]) -> st.SearchStrategy[_Factory]:
    return st.builds(
        functools.partial,
        st.just(_make_card),
        target=st.sampled_from([SAMPLE_TARGET, BROKEN_TARGET]),
        toolset=subsets(toolsets),
        unsafe_in=subsets(sources, max_size=2),
        defer=st.booleans(),
        expose=_EXPOSE,
    )


def _named(factories: st.SearchStrategy[_Factory], names: st.SearchStrategy[str]) -> Any:
    return st.builds(lambda make, name: make(name), factories, names)


def tools(
    *,
    name: str | None = None,
    names: Sequence[str] = DEFAULT_NAMES,
    toolsets: Sequence[str] = DEFAULT_TOOLSETS,
    sources: Sequence[str] = DEFAULT_SOURCES,
    env_vars: Sequence[str] = DEFAULT_ENV_VARS,
    predicates: bool = True,
) -> st.SearchStrategy[Tool]:
    """A ``Tool`` with every piece of gate metadata drawn.

    Args:
        name: Fix the name (else one of ``names``).
        names: Names to draw from.
        toolsets: Toolset names ``toolset`` draws from.
        sources: Sources ``unsafe_in`` and ``SourceIn`` draw from.
        env_vars: Variables ``requires_env`` draws from.
        predicates: Also draw ``check_fn`` and ``can_use``.
    """
    chosen = st.just(name) if name is not None else tool_names(names)
    made: st.SearchStrategy[Tool] = _named(
        _tool_factories(toolsets, sources, env_vars, predicates), chosen
    )
    return made


def lazy_tools(
    *,
    name: str | None = None,
    names: Sequence[str] = DEFAULT_NAMES,
    toolsets: Sequence[str] = DEFAULT_TOOLSETS,
    sources: Sequence[str] = DEFAULT_SOURCES,
) -> st.SearchStrategy[LazyTool]:
    """A fresh, unloaded lazy card whose target imports fine or fails (``BROKEN_TARGET``)."""
    chosen = st.just(name) if name is not None else tool_names(names)
    made: st.SearchStrategy[LazyTool] = _named(_card_factories(toolsets, sources), chosen)
    return made


def tool_lists(
    *,
    names: Sequence[str] = DEFAULT_NAMES,
    min_size: int = 0,
    max_size: int | None = None,
    lazy: bool = False,
    toolsets: Sequence[str] = DEFAULT_TOOLSETS,
    sources: Sequence[str] = DEFAULT_SOURCES,
    env_vars: Sequence[str] = DEFAULT_ENV_VARS,
    predicates: bool = True,
) -> st.SearchStrategy[list[Tool]]:
    """Lists of tools with distinct names (as a registry or ``tools=`` would hold them).

    Args:
        names: Names to draw from (bounds the list length).
        min_size: Fewest tools.
        max_size: Most tools (default: all names).
        lazy: Mix in lazy cards (``lazy_tools``).
        toolsets: As for ``tools``.
        sources: As for ``tools``.
        env_vars: As for ``tools``.
        predicates: As for ``tools``.
    """
    factories = _tool_factories(toolsets, sources, env_vars, predicates)
    if lazy:
        factories = st.one_of(factories, _card_factories(toolsets, sources))
    picked = st.lists(
        st.sampled_from(tuple(names)), unique=True, min_size=min_size, max_size=max_size
    )
    made: st.SearchStrategy[list[Tool]] = _assemble(picked, factories)
    return made


@st.composite
def _assemble(
    draw: st.DrawFn, /, picked: st.SearchStrategy[list[str]], factories: st.SearchStrategy[_Factory]
) -> list[Tool]:
    return [draw(factories)(name) for name in draw(picked)]
