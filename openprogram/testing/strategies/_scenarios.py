"""Strategies for whole setups: a registry of drawn tools, or a scenario (tools, policy, env)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st

from openprogram.gates import Policy
from openprogram.registry import Registry
from openprogram.testing.strategies._gate_parts import Scenario
from openprogram.testing.strategies._policies import environments, policies
from openprogram.testing.strategies._tools import tool_lists
from openprogram.testing.strategies._vocabulary import (
    DEFAULT_ENV_VARS,
    DEFAULT_NAMES,
    DEFAULT_SOURCES,
    DEFAULT_TOOLSETS,
    subsets,
)
from openprogram.tools import Tool

__all__ = ["registries", "scenarios"]


def _make_registry(
    tools: Sequence[Tool], definitions: Sequence[tuple[str, tuple[str, ...]]]
) -> Registry:
    registry = Registry()
    for tool in tools:
        registry.register(tool)
    for toolset, members in definitions:
        registry.define_toolset(toolset, members)
    return registry


def registries(
    *,
    names: Sequence[str] = DEFAULT_NAMES,
    toolsets: Sequence[str] = DEFAULT_TOOLSETS,
    lazy: bool = False,
    **tool_options: Any,
) -> st.SearchStrategy[Registry]:
    """A fresh ``Registry`` with drawn tools and, sometimes, ``define_toolset`` definitions.

    Args:
        names: Names to draw from (tools and toolset members).
        toolsets: Toolset names drawn for tools and definitions.
        lazy: Mix in lazy cards.
        **tool_options: Passed to ``tools`` (``sources``, ``env_vars``, ``predicates``).
    """
    definition = st.tuples(st.sampled_from(tuple(toolsets)), subsets(names, max_size=3))
    return st.builds(
        _make_registry,
        tools=tool_lists(names=names, toolsets=toolsets, lazy=lazy, **tool_options),
        definitions=st.lists(definition, max_size=2, unique_by=lambda d: d[0])
        if toolsets
        else st.just([]),
    )


def _make_scenario(tools: list[Tool], policy: Policy, env: dict[str, str], pick: int) -> Scenario:
    declared = sorted({ts for tool in tools for ts in tool.toolset})
    if policy.toolset not in {None, "none", *declared}:
        choices = [None, *declared]
        policy = policy.replace(toolset=choices[pick % len(choices)])
    return Scenario(tools=tools, policy=policy, env=env)


def scenarios(
    *,
    names: Sequence[str] = DEFAULT_NAMES,
    toolsets: Sequence[str] = DEFAULT_TOOLSETS,
    sources: Sequence[str] = DEFAULT_SOURCES,
    env_vars: Sequence[str] = DEFAULT_ENV_VARS,
    lazy: bool = False,
) -> st.SearchStrategy[Scenario]:
    """A ``Scenario``: tools, a policy naming only toolsets some drawn tool declares, an env.

    Args:
        names: Tool names (also what the policy's lists mention).
        toolsets: Toolset names.
        sources: Channel sources.
        env_vars: Environment variables.
        lazy: Mix in lazy cards.
    """
    return st.builds(
        _make_scenario,
        tools=tool_lists(
            names=names, toolsets=toolsets, sources=sources, env_vars=env_vars, lazy=lazy
        ),
        policy=policies(names=names, toolsets=toolsets, sources=sources),
        env=environments(env_vars),
        pick=st.integers(min_value=0, max_value=7),
    )
