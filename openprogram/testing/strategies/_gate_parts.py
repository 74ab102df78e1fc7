"""The readable pieces Hypothesis draws for gating: predicates, and a scenario that prints.

Predicates drawn by ``openprogram.testing.strategies`` (``check_fn``,
``can_use``) are deterministic objects with a readable ``repr``, and a
``Scenario`` shows every piece of its tools' gate metadata, so a failing
example shrinks to something you can read.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from openprogram.gates import GateContext, Policy
from openprogram.registry import LazyTool
from openprogram.tools import Tool

__all__ = ["Always", "Raises", "Scenario", "SourceIn", "describe"]


class Always:
    """A predicate that always answers ``value`` (usable as ``check_fn`` and ``can_use``)."""

    def __init__(self, value: bool) -> None:
        self.value = value

    def __call__(self, *args: Any) -> bool:
        return self.value

    def __repr__(self) -> str:
        return f"Always({self.value})"


class Raises:
    """A predicate that always raises ``RuntimeError`` (the tool must be hidden: fail closed)."""

    def __call__(self, *args: Any) -> bool:
        raise RuntimeError("predicate failed on purpose")

    def __repr__(self) -> str:
        return "Raises()"


class SourceIn:
    """A ``can_use(ctx)`` that allows the tool only when ``ctx.source`` is one of ``sources``.

    With ``every=True`` it looks at ``ctx.sources`` instead, every source the
    run came through: the tool is allowed only when there is one and all of
    them are in ``sources``, so an inner exec that relabels itself
    (``tools_source="internal"``) inside a ``"public"`` one is still refused.
    """

    def __init__(self, sources: Iterable[str], *, every: bool = False) -> None:
        self.sources = frozenset(sources)
        self.every = every

    def __call__(self, ctx: GateContext) -> bool:
        if self.every:
            return bool(ctx.sources) and self.sources.issuperset(ctx.sources)
        return ctx.source in self.sources

    def __repr__(self) -> str:
        every = ", every=True" if self.every else ""
        return f"SourceIn({sorted(self.sources)!r}{every})"


@dataclass(frozen=True)
class Scenario:
    """Tools, a policy and an environment that fit together (``policy.toolset`` is known)."""

    tools: list[Tool]
    """The tools, in registration order."""
    policy: Policy
    """A policy mentioning those tools' names and toolsets."""
    env: dict[str, str]
    """What ``requires_env`` reads."""

    def __repr__(self) -> str:
        # Tool's own repr omits most gate metadata; a failing example must show all of it.
        tools = ",\n    ".join(describe(tool) for tool in self.tools)
        return f"Scenario(tools=[\n    {tools}\n  ], policy={self.policy!r}, env={self.env!r})"


def describe(tool: Tool) -> str:
    """One line with every piece of gate metadata of ``tool`` that differs from the default."""
    parts = [repr(tool.name)]
    if isinstance(tool, LazyTool):
        parts.append(f"lazy={tool.target!r}")
    for field in ("toolset", "unsafe_in", "requires_env"):
        if getattr(tool, field):
            parts.append(f"{field}={list(getattr(tool, field))!r}")
    defaults = {"expose": True, "defer": False, "check_fn": None, "can_use": None}
    for field, default in defaults.items():
        if getattr(tool, field) != default:
            parts.append(f"{field}={getattr(tool, field)!r}")
    return f"Tool({', '.join(parts)})"
