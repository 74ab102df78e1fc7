"""Which tools ``openprogram tools`` lists: the registry a user's modules fill, or define.

``--registry module:attr`` names a ``Registry``. Without it, the modules named
by ``--module`` are imported and, when their decorators register tools into the
default registry, that registry is listed (the other modules' tools with it).
A module whose tools are not in the default registry is looked into instead:

- it defines one ``Registry`` (``TOOLS = Registry()`` …): that one is listed,
  with a note naming it (the same as ``--registry module:TOOLS``);
- it defines several: a usage error naming them, to pick one with ``--registry``;
- it defines none, but tools made with ``register_globally=False`` at module
  level: those are listed, in definition order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from openprogram.cli._imports import import_attribute, import_user_module
from openprogram.exceptions import ConfigurationError
from openprogram.registry import Registry, default_registry
from openprogram.tools import Tool

__all__ = ["ToolSource", "find_tools"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolSource:
    """The registry to list, what to call it, and what the user should know about it."""

    registry: Registry
    """The tools to resolve the policy against."""
    label: str
    """``"default"``, ``"module:attr"`` of a Registry, or ``"tools of <module>"``."""
    notes: tuple[str, ...] = ()
    """Why these tools were chosen, when the command line did not say (shown on stderr)."""


def find_tools(modules: Sequence[str], registry: str | None, *, entry_points: bool) -> ToolSource:
    """Import ``modules``, then choose the registry (see the module docstring).

    Raises:
        ConfigurationError: ``registry`` names something other than a ``Registry``, or
            the modules define several registries and ``registry`` does not pick one.
        TargetNotFoundError: A module or attribute does not exist.
        UserCodeError: A module raised while importing.
    """
    before = set(default_registry.names())
    imported = [import_user_module(name) for name in modules]
    if registry:
        source = ToolSource(registry=_named_registry(registry), label=registry)
    else:
        source = _from_modules(imported, before)
    if entry_points:
        source.registry.load_entry_points()
    return source


def _named_registry(target: str) -> Registry:
    found = import_attribute(target)
    if not isinstance(found, Registry):
        raise ConfigurationError(
            f"--registry {target}: that is a {type(found).__name__}, not a "
            "openprogram Registry; point it at a Registry() your module fills"
        )
    return found


def _from_modules(modules: Sequence[ModuleType], before: set[str]) -> ToolSource:
    if not modules:
        return ToolSource(registry=default_registry, label="default")
    names = ", ".join(m.__name__ for m in modules)
    own = _registries_of(modules)
    if _fill_default(modules, before):
        notes = tuple(
            f"{label} is a Registry of its own, not listed here: list it with --registry {label}"
            for label in own
        )
        return ToolSource(registry=default_registry, label="default", notes=notes)
    if len(own) == 1:
        ((label, found),) = own.items()
        note = (
            f"{names} registers no tool in the default registry; listing its Registry "
            f"{label} (the same as --registry {label})"
        )
        return ToolSource(registry=found, label=label, notes=(note,))
    if own:
        raise ConfigurationError(
            f"{names} registers no tool in the default registry and defines several "
            f"registries ({', '.join(own)}); choose one with --registry, e.g. "
            f"--registry {next(iter(own))}"
        )
    return _loose_tools(modules, names)


def _fill_default(modules: Sequence[ModuleType], before: set[str]) -> bool:
    """Whether the modules' decorators registered tools into the default registry."""
    if set(default_registry.names()) - before:
        return True
    names = {m.__name__ for m in modules}  # imported earlier: look at where tools come from
    return any(_origin(tool) in names for tool in default_registry.tools())


def _registries_of(modules: Sequence[ModuleType]) -> dict[str, Registry]:
    """``{"module:ATTR": registry}`` for every Registry the modules hold at module level."""
    found: dict[str, Registry] = {}
    seen: set[int] = set()
    for module in modules:
        for attr, value in vars(module).items():
            if isinstance(value, Registry) and value is not default_registry:
                if id(value) not in seen:
                    found[f"{module.__name__}:{attr}"] = value
                seen.add(id(value))
    return found


def _loose_tools(modules: Sequence[ModuleType], names: str) -> ToolSource:
    registry = Registry()
    for module in modules:
        for value in vars(module).values():
            tool = _as_tool(value)
            if tool is not None and _origin(tool) == module.__name__:
                registry.register(tool)
    if not len(registry):
        note = (
            f"{names} defines no tools: none in the default registry, no Registry, no tool "
            "at module level; listing the default registry"
        )
        return ToolSource(registry=default_registry, label="default", notes=(note,))
    note = (
        f"{names} registers its tools in no registry (register_globally=False); listing the "
        f"{len(registry)} tool(s) it defines at module level"
    )
    return ToolSource(registry=registry, label=f"tools of {names}", notes=(note,))


def _as_tool(value: Any) -> Tool | None:
    if isinstance(value, Tool):
        return value
    inner = getattr(value, "__openprogram_tool__", None)
    return inner if isinstance(inner, Tool) else None


def _origin(tool: Tool) -> str | None:
    """The module that defined the tool's function (``None`` for tools without one)."""
    module = getattr(tool.fn, "__module__", None)
    return module if isinstance(module, str) else None
