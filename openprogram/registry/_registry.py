"""``Registry``: the named tools a program knows about, in registration order.

Decorators register into ``default_registry`` unless told otherwise. Every
mutation bumps ``version``, which is what the gates' resolution cache keys on.
Reading (``names()``, ``in``, ``len``, ``tools()``) never imports a lazy card;
``get()`` and ``schemas()`` do, because they hand out something runnable.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from openprogram.exceptions import UserError
from openprogram.registry._lazy import TARGET_PATTERN, LazyTool
from openprogram.tools import Tool, ToolLike, to_tool

if TYPE_CHECKING:
    from importlib import metadata

__all__ = ["Registry", "RegistrySnapshot", "default_registry"]

_log = logging.getLogger("openprogram.registry")

RESERVED_TOOLSETS = frozenset({"none"})
"""Toolset names with a fixed meaning (``toolset="none"`` offers nothing)."""


@dataclass(frozen=True, slots=True)
class RegistrySnapshot:
    """A consistent view of a registry at one ``version`` (what the gates resolve)."""

    version: int
    """The registry's version when the snapshot was taken."""
    tools: tuple[Tool, ...]
    """Every registered tool and card, in registration order."""
    defined_toolsets: Mapping[str, tuple[str, ...]]
    """Toolsets defined with ``define_toolset`` (name -> member names)."""


class Registry:
    """Named tools and toolsets, in registration order.

    Example:
        >>> from openprogram.tools import Tool
        >>> reg = Registry()
        >>> _ = reg.register(Tool(name="ping", execute=lambda args: "pong"))
        >>> reg.names(), "ping" in reg, len(reg)
        (['ping'], True, 1)
    """

    def __init__(self) -> None:
        self._tools: dict[str, Tool] = {}
        self._toolsets: dict[str, tuple[str, ...]] = {}
        self._version = 0
        self._snapshot: RegistrySnapshot | None = None
        # Re-entrant: importing a lazy card's module may register tools from inside a lock holder.
        self._lock = threading.RLock()

    # -- reading (never imports) -----------------------------------------------------------

    @property
    def version(self) -> int:
        """A counter that changes on every mutation (for caches)."""
        return self._version

    def names(self) -> list[str]:
        """Registered names, sorted."""
        return sorted(tool.name for tool in self.snapshot().tools)

    def tools(self) -> list[Tool]:
        """Registered tools (lazy cards unloaded), in registration order."""
        # From the snapshot: safe while another thread registers.
        return list(self.snapshot().tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)

    def __repr__(self) -> str:
        return f"Registry({len(self._tools)} tools, version={self._version})"

    def toolsets(self) -> dict[str, tuple[str, ...]]:
        """Every known toolset and its members.

        A toolset is known when a registered tool declares it (``toolset=``) or
        ``define_toolset`` defined it. Members are registered tools in
        registration order, then defined names not registered yet.
        """
        snap = self.snapshot()
        declared: dict[str, list[str]] = {}
        for tool in snap.tools:
            for ts in tool.toolset:
                declared.setdefault(ts, []).append(tool.name)
        result: dict[str, tuple[str, ...]] = {}
        for ts in [*declared, *(d for d in snap.defined_toolsets if d not in declared)]:
            defined = snap.defined_toolsets.get(ts, ())
            chosen = set(declared.get(ts, ())) | set(defined)
            registered = [t.name for t in snap.tools if t.name in chosen]
            taken = set(registered)
            result[ts] = (*registered, *(n for n in defined if n not in taken))
        return result

    def snapshot(self) -> RegistrySnapshot:
        """The tools and defined toolsets at the current version (cached until a mutation)."""
        snap = self._snapshot
        if snap is not None and snap.version == self._version:
            return snap
        with self._lock:
            snap = RegistrySnapshot(
                version=self._version,
                tools=tuple(self._tools.values()),
                defined_toolsets=dict(self._toolsets),
            )
            self._snapshot = snap
            return snap

    # -- reading that loads ----------------------------------------------------------------

    def get(self, name: str) -> Tool | None:
        """The tool registered as ``name``, or ``None``.

        A lazy card is imported and returned loaded.

        Raises:
            ImportError: ``name`` is a lazy card whose target cannot be imported.
        """
        tool = self._tools.get(name)
        return tool.load() if tool is not None else None

    def schemas(self) -> list[dict[str, Any]]:
        """``tool.spec`` of every registered tool, in registration order (loads lazy cards).

        Raises:
            ImportError: A lazy card's target cannot be imported.
        """
        return [tool.load().spec for tool in self.tools()]

    # -- mutations -------------------------------------------------------------------------

    def register(self, tool: ToolLike, *, replace: bool = False) -> Tool:
        """Add a tool (any tool-like value is coerced) and return the ``Tool``.

        Registering the very same object again is a no-op. A function defined
        again under the same qualified name in the same module (a notebook cell
        run twice, a module reloaded) replaces its earlier tool, keeping its
        place in the order. While a lazy card imports its module, a same-named
        tool that module registers is the card's own implementation arriving,
        not a conflict: it is returned without being registered (the card stays
        in place).

        Raises:
            ValueError: Another tool already has this name and ``replace`` is
                false; the message names both origins.
        """
        new = to_tool(tool)
        with self._lock:
            existing = self._tools.get(new.name)
            if existing is new:
                return new
            if existing is not None and not replace:
                if _materialises(existing, new):
                    return new
                if not _redefines(existing, new):
                    raise UserError(_duplicate_message(existing, new))
                _log.debug(
                    "tool %r: %s was defined again; the new one replaces it", new.name, new.origin
                )
            self._tools[new.name] = new
            self._bump()
        return new

    def unregister(self, name: str) -> None:
        """Remove the tool registered as ``name``.

        Raises:
            KeyError: Nothing is registered under ``name``.
        """
        with self._lock:
            if name not in self._tools:
                raise KeyError(f"no tool named {name!r} is registered; registered: {self.names()}")
            del self._tools[name]
            self._bump()

    def define_toolset(self, name: str, names: Iterable[str]) -> None:
        """Define (or redefine) toolset ``name`` as these tool names, besides decorator membership.

        Members need not be registered yet.

        Raises:
            UserError: ``name`` is reserved (``"none"``) or not a non-empty string,
                or a member is not a string.
        """
        if not isinstance(name, str) or not name or name in RESERVED_TOOLSETS:
            raise UserError(
                f"define_toolset: invalid toolset name {name!r}; use a non-empty string other "
                f"than {sorted(RESERVED_TOOLSETS)} (reserved: toolset='none' means no tools)"
            )
        members = (names,) if isinstance(names, str) else tuple(names)
        bad = [m for m in members if not isinstance(m, str)]
        if bad:
            raise UserError(
                f"define_toolset({name!r}): members must be tool names (str), got {bad!r}"
            )
        with self._lock:
            self._toolsets[name] = tuple(dict.fromkeys(members))
            self._bump()

    def lazy(
        self,
        name: str,
        target: str,
        *,
        description: str,
        toolset: str | Sequence[str] = (),
        defer: bool = False,
        expose: bool = True,
        unsafe_in: str | Sequence[str] = (),
        requires_env: str | Sequence[str] = (),
        check_fn: Callable[[], bool] | None = None,
        can_use: Callable[[Any], bool] | None = None,
        summary: str | None = None,
        label: str | None = None,
        replace: bool = False,
    ) -> LazyTool:
        """Register a card for ``target`` (``"pkg.module:attr"``) without importing it.

        The module is imported the first time the tool is offered, called or
        loaded by ``tool_search``; gating reads only the card's metadata given
        here. An import failure fails that tool closed (rejected with the
        reason), never the run.

        Raises:
            ValueError: The name is taken (see ``register``) or ``target`` is malformed.
        """
        card = LazyTool(
            name=name,
            target=target,
            description=description,
            toolset=toolset,
            defer=defer,
            expose=expose,
            unsafe_in=unsafe_in,
            requires_env=requires_env,
            check_fn=check_fn,
            can_use=can_use,
            summary=summary,
            label=label,
        )
        self.register(card, replace=replace)
        return card

    def load_entry_points(
        self,
        group: str = "openprogram.tools",
        *,
        toolset: str | Sequence[str] = (),
        defer: bool = False,
        unsafe_in: str | Sequence[str] = (),
        requires_env: str | Sequence[str] = (),
    ) -> list[str]:
        """Register a lazy card for every entry point of ``group`` in installed distributions.

        Nothing is imported. An entry point ``weather = "weather_pkg.tools:get_weather"``
        becomes the card ``weather``; until it is loaded its description is the
        distribution's summary, afterwards the tool's own. The keyword
        arguments are gate metadata applied to every card of this call (e.g.
        ``toolset="plugins", defer=True``). Calling again skips cards already
        registered for the same target.

        Returns:
            The names registered by this call, in discovery order.

        Raises:
            ValueError: An entry point's name is taken by another tool (both origins named).
        """
        added: list[str] = []
        for ep in _entry_points(group):
            target = f"{ep.module}:{ep.attr}" if ep.attr else ep.value
            existing = self._tools.get(ep.name)
            if isinstance(existing, LazyTool) and existing.target == target:
                continue
            if not TARGET_PATTERN.match(target):
                # One broken plugin must not stop the program from starting: say so and go on.
                _log.warning(
                    "skipping %s: its value must name an attribute, like 'pkg.module:attr'",
                    _ep_origin(ep, group),
                )
                continue
            card = LazyTool(
                name=ep.name,
                target=target,
                placeholder=_dist_summary(ep),
                origin=_ep_origin(ep, group),
                toolset=toolset,
                defer=defer,
                unsafe_in=unsafe_in,
                requires_env=requires_env,
            )
            self.register(card)
            added.append(ep.name)
        return added

    def _bump(self) -> None:
        self._version += 1


def _materialises(existing: Tool, new: Tool) -> bool:
    """Whether ``new`` is a lazy card's implementation registering itself on import."""
    if not isinstance(existing, LazyTool) or isinstance(new, LazyTool):
        return False
    if existing.loading:
        return True
    # The card's own module imported some other way (a plain ``import``) registers the
    # same function; anything from another module is a real conflict.
    return getattr(new.fn, "__module__", None) == existing.module_name


def _redefines(existing: Tool, new: Tool) -> bool:
    """Whether ``new`` wraps a function with the same module and qualified name as ``existing``.

    That is the same definition run again (a notebook cell re-run, a module
    reloaded), not two tools competing for one name.
    """
    if isinstance(existing, LazyTool) or isinstance(new, LazyTool):
        return False
    old = _defined_as(existing.fn)
    return old is not None and old == _defined_as(new.fn)


def _defined_as(fn: Any) -> tuple[str, str] | None:
    module = getattr(fn, "__module__", None) if fn is not None else None
    qualname = getattr(fn, "__qualname__", None) if fn is not None else None
    if isinstance(module, str) and isinstance(qualname, str):
        return module, qualname
    return None


def _duplicate_message(existing: Tool, new: Tool) -> str:
    first = existing.origin or "an unnamed origin"
    second = new.origin or "an unnamed origin"
    return (
        f"a tool named {new.name!r} is already registered (from {first}); the second "
        f"registration comes from {second}. Give one of them another name (name=...), "
        "unregister the first, or pass replace=True."
    )


def _entry_points(group: str) -> list[metadata.EntryPoint]:
    # importlib.metadata (and the email parser it brings) loads when entry points are
    # asked for, not at ``import openprogram``.
    from importlib import metadata  # noqa: PLC0415 - deferred for import cost

    seen: set[tuple[str, str]] = set()
    found: list[metadata.EntryPoint] = []
    # The same distribution on sys.path twice lists its entry points twice: keep one.
    for ep in metadata.entry_points(group=group):
        if (ep.name, ep.value) not in seen:
            seen.add((ep.name, ep.value))
            found.append(ep)
    return found


def _dist_summary(ep: metadata.EntryPoint) -> str:
    dist = ep.dist
    summaries = dist.metadata.get_all("Summary") if dist is not None else None
    summary = summaries[0] if summaries else ""
    source = f"distribution {dist.name}" if dist is not None else "an installed distribution"
    text = f"{ep.name} from {source}"
    return f"{text}: {summary}" if summary and summary != "UNKNOWN" else text


def _ep_origin(ep: metadata.EntryPoint, group: str) -> str:
    dist = ep.dist
    where = f"{dist.name} {dist.version}" if dist is not None else "an unknown distribution"
    return f"entry point {ep.name!r} = {ep.value!r} in group {group!r} of {where}"


default_registry = Registry()
"""The registry decorators use when not given ``registry=``."""
