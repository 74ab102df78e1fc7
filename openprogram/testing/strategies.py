"""Hypothesis strategies for tools, policies and registries: property-test your own gating rules.

Every strategy draws from a small, shared vocabulary (tool names, toolsets,
channel sources, environment variables) so that drawn policies actually
mention drawn tools; pass your own vocabulary to aim them at your program.
Predicates drawn here (``check_fn``, ``can_use``) are deterministic objects
with a readable ``repr``, so a failing example shrinks to something you can
read. Needs ``hypothesis`` (a dev dependency).

Example — "the shell tool is never offered to a chat channel", checked for
every policy a caller could pass::

    from hypothesis import given
    from openprogram.gates import Policy, resolve
    from openprogram.testing.strategies import policies_for

    @given(policies_for(my_registry, sources=["chat", "cli"]))
    def test_no_shell_in_chat(policy):
        if "chat" in policy.sources:
            assert "shell" not in resolve(my_registry, policy).offered_names

``from_json_schema(schema)`` draws valid JSON values for a JSON Schema (the
tool parameters and response formats openprogram derives), e.g. to fuzz a
tool's body with arguments a model could send.

Strategies: ``from_json_schema``, ``tool_names``, ``check_fns``, ``can_use_predicates``, ``tools``,
``lazy_tools``, ``tool_lists``, ``environments``, ``policies``,
``policies_for``, ``registries``, ``scenarios``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from hypothesis import strategies as st

from openprogram.gates import GateContext, Policy
from openprogram.registry import LazyTool, Registry
from openprogram.testing._gate_parts import Always, Raises, Scenario, SourceIn, describe
from openprogram.testing._json_strategy import from_json_schema
from openprogram.tools import Tool

__all__ = [
    "BROKEN_TARGET",
    "DEFAULT_ENV_VARS",
    "DEFAULT_NAMES",
    "DEFAULT_SOURCES",
    "DEFAULT_TOOLSETS",
    "SAMPLE_TARGET",
    "Always",
    "Raises",
    "Scenario",
    "SourceIn",
    "can_use_predicates",
    "check_fns",
    "describe",
    "environments",
    "from_json_schema",
    "lazy_tools",
    "policies",
    "policies_for",
    "registries",
    "scenarios",
    "tool_lists",
    "tool_names",
    "tools",
]

DEFAULT_NAMES = (
    "search",
    "fetch",
    "shell",
    "read_file",
    "send_mail",
    "calendar",
    "deploy",
    "notes",
)
"""Tool names drawn when none are given."""
DEFAULT_TOOLSETS = ("web", "files", "ops")
"""Toolset names drawn when none are given."""
DEFAULT_SOURCES = ("cli", "web", "chat")
"""Channel sources drawn when none are given."""
DEFAULT_ENV_VARS = ("OPENPROGRAM_TEST_KEY_A", "OPENPROGRAM_TEST_KEY_B")
"""Environment variables ``requires_env`` draws from and ``environments`` sets."""

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


def _subsets(
    items: Sequence[str], max_size: int | None = None
) -> st.SearchStrategy[tuple[str, ...]]:
    if not items:
        return st.just(())
    return st.lists(st.sampled_from(items), unique=True, max_size=max_size).map(tuple)


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
    source_in = _subsets(sources).map(SourceIn)
    if every:
        trail = _subsets(sources).map(functools.partial(SourceIn, every=True))
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
        toolset=_subsets(toolsets),
        unsafe_in=_subsets(sources, max_size=2),
        requires_env=_subsets(env_vars, max_size=1),
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
        toolset=_subsets(toolsets),
        unsafe_in=_subsets(sources, max_size=2),
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
        allow=st.one_of(st.none(), st.none(), st.none(), _subsets(names)),
        deny=st.just(()) | _subsets(names, max_size=3),
        disabled=st.just(()) | _subsets(names, max_size=2),
        only_available=(
            st.sampled_from([True, True, False])
            if only_available is None
            else st.just(only_available)
        ),
        loaded=_subsets(names),
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
    definition = st.tuples(st.sampled_from(tuple(toolsets)), _subsets(names, max_size=3))
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
