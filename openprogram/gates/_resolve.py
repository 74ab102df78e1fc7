"""``resolve()`` and ``explain()``: apply the layers of ``_layers`` to a registry or a tool list.

Resolving a registry is cached in two levels so a turn costs almost nothing
however many tools are registered:

1. per (registry version, policy without ``loaded``, which required
   environment variables are set): the verdicts of the pure layers for every
   tool, and the short list of tools whose predicates must run again;
2. inside that, per (loaded deferred names, predicate verdicts): the finished
   ``Resolution`` object.

A second call with nothing changed runs only the predicates of the tools that
have them, then returns the same ``Resolution``. Tool lists (``tools=[...]``)
get the same two levels, keyed by the identity of their items (an agentic
function passes the same list on every call), in a small LRU that holds the
items alive so that identities cannot be reused while cached.
"""

from __future__ import annotations

import difflib
import os
import threading
import weakref
from collections import OrderedDict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from openprogram.exceptions import UserError
from openprogram.gates._availability import has_predicates
from openprogram.gates._layers import CACHED_GATES, DEFER_GATE, LAYERS, LIVE_GATE
from openprogram.gates._policy import Policy
from openprogram.gates._toolset import check_toolset_known, known_toolsets
from openprogram.gates._types import (
    L4_AVAILABILITY,
    NOT_REGISTERED,
    GateContext,
    GateInput,
    Rejection,
    Verdict,
)
from openprogram.registry import Registry, default_registry
from openprogram.tools import Tool, ToolLike, to_tool

__all__ = ["Resolution", "explain", "resolve"]

_STATIC_ENTRIES = 64
"""Policies × environments remembered per registry (older ones are recomputed)."""
_FINISHED_ENTRIES = 16
"""Loaded-sets × predicate outcomes remembered per policy."""
_LIST_ENTRIES = 32
"""Distinct tool lists remembered."""


@dataclass(frozen=True, slots=True)
class Resolution:
    """The outcome of gating: what is sent, what is only listed, and why the rest is hidden."""

    offered: tuple[Tool, ...]
    """Tools whose schemas are sent, in registration order (lazy cards loaded)."""
    deferred: tuple[Tool, ...]
    """Deferred tools not loaded yet: catalog only (name + one-liner), in registration order."""
    rejected: Mapping[str, Rejection] = field(default_factory=lambda: MappingProxyType({}))
    """Hidden tools: name -> the first layer that rejected it, in registration order."""

    @property
    def specs(self) -> list[dict[str, Any]]:
        """``tool.spec`` of every offered tool, for the provider request."""
        return [tool.spec for tool in self.offered]

    @property
    def offered_names(self) -> tuple[str, ...]:
        """Names of the offered tools, in order."""
        return tuple(tool.name for tool in self.offered)

    @property
    def deferred_names(self) -> tuple[str, ...]:
        """Names of the deferred tools, in order."""
        return tuple(tool.name for tool in self.deferred)


def resolve(
    tools: Registry | Sequence[ToolLike],
    policy: Policy,
    env: Mapping[str, str] | None = None,
    *,
    deps: Any = None,
    toolsets: Mapping[str, Iterable[str]] | None = None,
) -> Resolution:
    """Apply every gate layer and split the tools into offered, deferred and rejected.

    Gating reads only metadata, so lazy cards are not imported unless
    offered; an offered card is loaded here, and a card whose import fails is
    rejected (``L4 availability``) with the reason instead.

    Args:
        tools: A ``Registry`` (cached) or a list of tools (coerced with ``to_tool``).
        policy: The policy to apply.
        env: What ``requires_env`` reads and ``can_use`` sees; ``os.environ`` by default.
        deps: Passed to ``can_use`` predicates as ``GateContext.deps``.
        toolsets: Toolset definitions for a tool list (a registry has its own).

    Raises:
        UserError: ``policy.toolset`` names no known toolset (the message lists
            them), two different tools in the list share a name, or
            ``toolsets=`` was given with a registry.
    """
    if not isinstance(policy, Policy):
        raise TypeError(f"resolve: policy must be a Policy, got {type(policy).__name__}")
    env_map: Mapping[str, str] = os.environ if env is None else env
    context = _context(policy, deps, env_map)
    if isinstance(tools, Registry):
        _no_toolsets_with_registry(toolsets)
        static = _cache_for(tools).static(policy, env_map)
    else:
        static = _list_cache_for(tools, toolsets).static(policy, env_map)
    return static.finish(policy, context)


def explain(
    name: str,
    policy: Policy,
    tools: Registry | Sequence[ToolLike] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    deps: Any = None,
    toolsets: Mapping[str, Iterable[str]] | None = None,
) -> Rejection | None:
    """Which layer keeps ``name`` from being offered, and why; ``None`` if it is offered.

    A deferred tool not loaded yet answers with its ``L6 defer`` rejection; a
    name no tool has answers with layer ``"registry"``. Same rules as
    ``resolve`` (including loading a lazy card that passes every layer).

    Args:
        name: The tool name.
        policy: The policy to apply.
        tools: A registry or tool list; the default registry when omitted.
        env: As for ``resolve``.
        deps: As for ``resolve``.
        toolsets: As for ``resolve``.
    """
    source = default_registry if tools is None else tools
    if isinstance(source, Registry):
        _no_toolsets_with_registry(toolsets)
        snap = source.snapshot()
        items, defined = snap.tools, _frozen_toolsets(snap.defined_toolsets)
    else:
        items, defined = _unique_tools(source), _frozen_toolsets(toolsets or {})
    check_toolset_known(policy.toolset, known_toolsets(items, defined))
    env_map: Mapping[str, str] = os.environ if env is None else env
    given = GateInput(policy, _context(policy, deps, env_map), defined)
    tool = next((t for t in items if t.name == name), None)
    if tool is None:
        return _not_registered(name, [t.name for t in items])
    for _layer, gate in LAYERS:
        verdict = gate(tool, given)
        if verdict is not None:
            return verdict
    return _load(tool)


# -- the two cache levels ------------------------------------------------------------------


@dataclass(eq=False)
class _Static:
    """Verdicts of the cached layers for one (tools, policy minus ``loaded``, env facts)."""

    entries: tuple[tuple[Tool, Verdict], ...]
    live: tuple[Tool, ...]
    deferrable: frozenset[str]
    toolsets: Mapping[str, frozenset[str]]
    finished: OrderedDict[Hashable, Resolution] = field(default_factory=OrderedDict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def build(
        cls,
        items: Sequence[Tool],
        toolsets: Mapping[str, frozenset[str]],
        policy: Policy,
        env: Mapping[str, str],
        known: frozenset[str] | None = None,
    ) -> _Static:
        check_toolset_known(
            policy.toolset, known if known is not None else known_toolsets(items, toolsets)
        )
        # Read each required variable once (os.environ lookups are slow), not once per tool.
        required = {var for tool in items for var in tool.requires_env}
        env_view = {var: value for var in required if (value := env.get(var))}
        given = GateInput(policy, _context(policy, None, env_view), toolsets)
        entries: list[tuple[Tool, Verdict]] = []
        for tool in items:
            verdict: Verdict = None
            for gate in CACHED_GATES:
                verdict = gate(tool, given)
                if verdict is not None:
                    break
            entries.append((tool, verdict))
        passing = [tool for tool, verdict in entries if verdict is None]
        live = tuple(t for t in passing if has_predicates(t)) if policy.only_available else ()
        return cls(
            entries=tuple(entries),
            live=live,
            deferrable=frozenset(t.name for t in passing if t.defer),
            toolsets=toolsets,
        )

    def finish(self, policy: Policy, context: GateContext) -> Resolution:
        given = GateInput(policy, context, self.toolsets)
        live = tuple(LIVE_GATE(tool, given) for tool in self.live)
        key = (policy.loaded & self.deferrable if self.deferrable else frozenset(), live)
        with self.lock:
            hit = self.finished.get(key)
            if hit is not None:
                self.finished.move_to_end(key)
                return hit
        result = self._assemble(given, dict(zip((t.name for t in self.live), live, strict=True)))
        with self.lock:
            self.finished[key] = result
            if len(self.finished) > _FINISHED_ENTRIES:
                self.finished.popitem(last=False)
        return result

    def _assemble(self, given: GateInput, live: Mapping[str, Verdict]) -> Resolution:
        offered: list[Tool] = []
        deferred: list[Tool] = []
        rejected: dict[str, Rejection] = {}
        for tool, cached in self.entries:
            verdict = cached or live.get(tool.name)
            if verdict is None and DEFER_GATE(tool, given) is not None:
                deferred.append(tool)
                continue
            verdict = verdict or _load(tool)
            if verdict is None:
                offered.append(tool)
            else:
                rejected[tool.name] = verdict
        return Resolution(tuple(offered), tuple(deferred), MappingProxyType(rejected))


class _ToolsCache:
    """Everything cached for one fixed set of tools (a registry version, or a tool list)."""

    def __init__(
        self, tools: tuple[Tool, ...], toolsets: Mapping[str, frozenset[str]], version: int = 0
    ) -> None:
        self.version = version
        self.tools = tools
        self.toolsets = toolsets
        self.known = known_toolsets(self.tools, self.toolsets)
        self.env_vars = tuple(sorted({var for tool in self.tools for var in tool.requires_env}))
        self.statics: OrderedDict[Hashable, _Static] = OrderedDict()
        self.lock = threading.Lock()

    def static(self, policy: Policy, env: Mapping[str, str]) -> _Static:
        env_facts = frozenset(var for var in self.env_vars if env.get(var))
        key = (
            policy.toolset,
            policy.sources,
            policy.allow,
            policy.deny,
            policy.disabled,
            policy.only_available,
            env_facts,
        )
        with self.lock:
            hit = self.statics.get(key)
            if hit is not None:
                self.statics.move_to_end(key)
                return hit
        static = _Static.build(self.tools, self.toolsets, policy, env, self.known)
        with self.lock:
            self.statics[key] = static
            if len(self.statics) > _STATIC_ENTRIES:
                self.statics.popitem(last=False)
        return static


_caches: weakref.WeakKeyDictionary[Registry, _ToolsCache] = weakref.WeakKeyDictionary()
_caches_lock = threading.Lock()
# key -> (the list's items, kept alive so their ids stay unique; the cache)
_list_caches: OrderedDict[Hashable, tuple[tuple[Any, ...], _ToolsCache]] = OrderedDict()


def _cache_for(registry: Registry) -> _ToolsCache:
    cache = _caches.get(registry)
    if cache is not None and cache.version == registry.version:
        return cache
    snap = registry.snapshot()
    cache = _ToolsCache(snap.tools, _frozen_toolsets(snap.defined_toolsets), snap.version)
    with _caches_lock:
        _caches[registry] = cache
    return cache


def _list_cache_for(
    tools: Sequence[ToolLike], toolsets: Mapping[str, Iterable[str]] | None
) -> _ToolsCache:
    _check_list(tools)
    items = tuple(tools)
    frozen = _frozen_toolsets(toolsets or {})
    key = (tuple(map(id, items)), tuple(sorted(frozen.items(), key=lambda kv: kv[0])))
    with _caches_lock:
        hit = _list_caches.get(key)
        if hit is not None:
            _list_caches.move_to_end(key)
            return hit[1]
    cache = _ToolsCache(_unique_tools(items), frozen)
    with _caches_lock:
        _list_caches[key] = (items, cache)
        if len(_list_caches) > _LIST_ENTRIES:
            _list_caches.popitem(last=False)
    return cache


# -- helpers -------------------------------------------------------------------------------


def _context(policy: Policy, deps: Any, env: Mapping[str, str]) -> GateContext:
    return GateContext(source=policy.source, deps=deps, env=env, sources=policy.source_trail)


def _load(tool: Tool) -> Verdict:
    """Import an offered lazy card; a failure rejects the tool (fail closed), never raises."""
    if tool.is_loaded:
        return None
    try:
        tool.load()
    except ImportError as exc:
        return Rejection(
            L4_AVAILABILITY, f"{exc} (the failure is kept: fix it, then re-register the card)"
        )
    return None


def _check_list(tools: object) -> None:
    if isinstance(tools, str | bytes | Mapping):
        raise TypeError(
            f"resolve: tools must be a Registry or a list of tools, got {type(tools).__name__}"
        )


def _unique_tools(tools: Sequence[ToolLike]) -> tuple[Tool, ...]:
    _check_list(tools)
    by_name: dict[str, Tool] = {}
    for index, obj in enumerate(tools):
        tool = to_tool(obj, index=index)
        seen = by_name.get(tool.name)
        if seen is not None and seen is not tool:
            raise UserError(
                f"two different tools are named {tool.name!r} in the tool list (from "
                f"{seen.origin or 'an unnamed origin'} and {tool.origin or 'an unnamed origin'}); "
                "a model can only pick by name: rename one of them"
            )
        by_name[tool.name] = tool
    return tuple(by_name.values())


def _no_toolsets_with_registry(toolsets: object) -> None:
    if toolsets is not None:
        raise UserError(
            "toolsets= is for tool lists: a registry has its own toolsets; define them with "
            "Registry.define_toolset instead"
        )


def _frozen_toolsets(toolsets: Mapping[str, Iterable[str]]) -> Mapping[str, frozenset[str]]:
    return {
        name: frozenset((members,) if isinstance(members, str) else members)
        for name, members in toolsets.items()
    }


def _not_registered(name: str, names: list[str]) -> Rejection:
    close = difflib.get_close_matches(name, names, n=3)
    hint = f" Did you mean {', '.join(repr(n) for n in close)}?" if close else ""
    return Rejection(
        NOT_REGISTERED,
        f"no tool named {name!r} among the {len(names)} tools given.{hint} Register it with "
        "@function / Registry.register (a decorated function whose available_if was false at "
        "decoration is never registered: L1)",
    )
