"""``Policy``: the caller's side of gating, a frozen and hashable value."""

from __future__ import annotations

from collections.abc import Iterable, Set
from dataclasses import dataclass, field
from typing import Any

from openprogram.exceptions import UserError

__all__ = ["Policy"]


def _names(value: Iterable[str] | None, field: str) -> frozenset[str]:
    if value is None:
        return frozenset()
    # A lone string is one name, not a set of characters.
    items = (value,) if isinstance(value, str) else tuple(value)
    bad = [item for item in items if not isinstance(item, str)]
    if bad:
        raise UserError(f"Policy({field}=...): expected tool names (str), got {bad!r}")
    return frozenset(items)


def _trail(inherited: Iterable[str] | None, source: str | None) -> tuple[str, ...]:
    """Every source once, outermost first, ``source`` last; a repeated source keeps its last place.

    A set has no order of its own, so its names are taken sorted.
    """
    ordered: tuple[str, ...]
    if inherited is None or isinstance(inherited, str | Set):
        ordered = tuple(sorted(_names(inherited, "inherited_sources")))
    else:
        ordered = tuple(inherited)  # once: it may be an iterator
        _names(ordered, "inherited_sources")  # only strings
    if source is not None:
        ordered = (*ordered, source)
    last = {name: index for index, name in enumerate(ordered)}
    return tuple(name for index, name in enumerate(ordered) if last[name] == index)


def _optional_str(value: Any, field: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise UserError(f"Policy({field}=...): expected a string or None, got {value!r}")
    return value


@dataclass(frozen=True, init=False)
class Policy:
    """Which tools an exec may offer: presets, channel, allow/deny lists, loaded deferred tools.

    Every argument is keyword-only; iterables are stored as frozensets, so a
    policy is hashable (the resolution cache keys on it). A lone string where
    names are expected means that one name.

    Args:
        toolset: ``None`` (all tools), ``"none"`` (no tools) or a toolset name.
        source: The channel this exec serves; tools with it in ``unsafe_in`` are hidden.
        allow: If given, a cap: only these names may be offered.
        deny: Names never offered, whatever else says so.
        disabled: Names switched off (by configuration rather than policy).
        only_available: Apply L4 (``check_fn``, ``requires_env``, ``can_use``).
        loaded: Deferred tools already loaded through ``tool_search``.
        inherited_sources: Sources of enclosing execs (set by ``narrow``), also hidden from;
            give them outermost first (a set is taken in sorted order).

    Example:
        >>> p = Policy(deny=["shell"], allow=["search", "shell"])
        >>> sorted(p.deny), sorted(p.allow or ())
        (['shell'], ['search', 'shell'])
    """

    toolset: str | None
    """``None`` = every tool; ``"none"`` = no tool; else the members of that toolset."""
    source: str | None
    """The channel the exec serves (``unsafe_in`` hides tools there)."""
    allow: frozenset[str] | None
    """A cap on the offered names; ``None`` = no cap."""
    deny: frozenset[str]
    """Names never offered (deny wins over everything)."""
    disabled: frozenset[str]
    """Names switched off; removed like ``deny``."""
    only_available: bool
    """Whether L4 availability predicates apply (``False`` skips them)."""
    loaded: frozenset[str]
    """Deferred tools loaded by ``tool_search``: their schemas are sent."""
    inherited_sources: frozenset[str]
    """Sources of enclosing execs; tools unsafe in any of them stay hidden."""
    source_trail: tuple[str, ...] = field(compare=False)
    """Every source in force, outermost first, ending with ``source`` (``GateContext.sources``).

    Each source appears once, where it was last met: a run that went
    ``"a"`` → ``"b"`` → ``"a"`` has the trail ``("b", "a")``.
    """

    def __init__(
        self,
        *,
        toolset: str | None = None,
        source: str | None = None,
        allow: Iterable[str] | None = None,
        deny: Iterable[str] = (),
        disabled: Iterable[str] = (),
        only_available: bool = True,
        loaded: Iterable[str] = (),
        inherited_sources: Iterable[str] = (),
    ) -> None:
        if not isinstance(only_available, bool):
            raise UserError(
                f"Policy(only_available=...): expected True or False, got {only_available!r}"
            )
        setattr_ = object.__setattr__  # the dataclass is frozen: normalise once, here
        setattr_(self, "toolset", _optional_str(toolset, "toolset"))
        setattr_(self, "source", _optional_str(source, "source"))
        setattr_(self, "allow", None if allow is None else _names(allow, "allow"))
        setattr_(self, "deny", _names(deny, "deny"))
        setattr_(self, "disabled", _names(disabled, "disabled"))
        setattr_(self, "only_available", only_available)
        setattr_(self, "loaded", _names(loaded, "loaded"))
        trail = _trail(inherited_sources, self.source)
        setattr_(self, "source_trail", trail)
        setattr_(self, "inherited_sources", frozenset(trail) - {self.source})

    @property
    def sources(self) -> frozenset[str]:
        """Every channel in force: ``source`` plus ``inherited_sources``."""
        if self.source is None:
            return self.inherited_sources
        return self.inherited_sources | {self.source}

    def narrow(self, inner: Policy) -> Policy:
        """The policy an inner exec runs under: this one's vetoes plus ``inner``'s narrowing.

        Law 7 (nesting only narrows): ``deny`` and ``disabled`` are united,
        ``allow`` caps intersect (``None`` = no cap), sources accumulate (an
        inner source adds to the outer one, never replaces it; ``source_trail``
        keeps the order they were met in) and ``only_available`` stays on
        once on. ``toolset`` is the inner one (an inner exec without
        ``tools=`` inherits the outer *menu* from the runtime, not a toolset).
        ``loaded`` is the union, so deferred tools loaded outside are loaded
        inside too — loading never bypasses a veto.
        """
        if self.allow is None:
            allow = inner.allow
        elif inner.allow is None:
            allow = self.allow
        else:
            allow = self.allow & inner.allow
        source = inner.source if inner.source is not None else self.source
        return Policy(
            toolset=inner.toolset,
            source=source,
            allow=allow,
            deny=self.deny | inner.deny,
            disabled=self.disabled | inner.disabled,
            only_available=self.only_available or inner.only_available,
            loaded=self.loaded | inner.loaded,
            inherited_sources=(*self.source_trail, *inner.source_trail),
        )

    def replace(self, **changes: Any) -> Policy:
        """A copy with some fields changed (same keywords as the constructor)."""
        fields: dict[str, Any] = {
            "toolset": self.toolset,
            "source": self.source,
            "allow": self.allow,
            "deny": self.deny,
            "disabled": self.disabled,
            "only_available": self.only_available,
            "loaded": self.loaded,
            "inherited_sources": self._inherited_in_order(),
        }
        unknown = sorted(set(changes) - set(fields))
        if unknown:
            raise TypeError(
                f"Policy.replace: unknown field(s) {unknown}; fields are {sorted(fields)}"
            )
        fields.update(changes)
        return Policy(**fields)

    def _inherited_in_order(self) -> tuple[str, ...]:
        return tuple(name for name in self.source_trail if name in self.inherited_sources)

    def __repr__(self) -> str:
        # Only what differs from the default, sets sorted: stable text for errors and hypothesis.
        parts = []
        for name, default in _DEFAULTS.items():
            value = getattr(self, name)
            if value != default:
                shown = sorted(value) if isinstance(value, frozenset) else value
                parts.append(f"{name}={shown!r}")
        return f"Policy({', '.join(parts)})"


_DEFAULTS: dict[str, Any] = {
    "toolset": None,
    "source": None,
    "allow": None,
    "deny": frozenset(),
    "disabled": frozenset(),
    "only_available": True,
    "loaded": frozenset(),
    "inherited_sources": frozenset(),
}
