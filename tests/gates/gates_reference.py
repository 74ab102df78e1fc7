"""A reference model of the gate layers, written as plain set algebra (docs/gates.md).

It shares no code with ``openprogram.gates``: each layer is restated from the
table as a predicate, and the offered set is their intersection. The law
tests compare the real resolution against it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from openprogram.gates import GateContext, Policy
from openprogram.registry import LazyTool
from openprogram.testing.strategies import BROKEN_TARGET
from openprogram.tools import Tool


def _holds(predicate: Any, *args: Any) -> bool:
    if predicate is None:
        return True
    try:
        return bool(predicate(*args))
    except Exception:  # noqa: BLE001 - a raising predicate hides the tool (fail closed)
        return False


def reference(
    tools: Sequence[Tool],
    policy: Policy,
    env: Mapping[str, str],
    *,
    defined: Mapping[str, Sequence[str]] | None = None,
    deps: Any = None,
) -> tuple[set[str], set[str]]:
    """(offered names, deferred names) the laws call for."""
    defined = defined or {}
    sources = set(policy.inherited_sources) | ({policy.source} - {None})
    ctx = GateContext(source=policy.source, deps=deps, env=env)

    def exposed(t: Tool) -> bool:
        return t.expose

    def in_toolset(t: Tool) -> bool:
        if policy.toolset is None:
            return True
        if policy.toolset == "none":
            return False
        return policy.toolset in t.toolset or t.name in defined.get(policy.toolset, ())

    def channel_ok(t: Tool) -> bool:
        return not sources & set(t.unsafe_in)

    def available(t: Tool) -> bool:
        if not policy.only_available:
            return True
        env_ok = all(env.get(var) for var in t.requires_env)
        return env_ok and _holds(t.check_fn) and _holds(t.can_use, ctx)

    def not_vetoed(t: Tool) -> bool:
        allowed = policy.allow is None or t.name in policy.allow
        return t.name not in policy.deny and t.name not in policy.disabled and allowed

    def importable(t: Tool) -> bool:
        return not (isinstance(t, LazyTool) and t.target == BROKEN_TARGET)

    layers = (exposed, in_toolset, channel_ok, available, not_vetoed)
    passing = {t.name for t in tools if all(layer(t) for layer in layers)}
    deferred = {t.name for t in tools if t.name in passing and t.defer} - policy.loaded
    offered = {t.name for t in tools if t.name in passing - deferred and importable(t)}
    return offered, deferred
