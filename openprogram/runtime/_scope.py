"""The tool scope of one exec: its resolved menu, inherited vetoes, loaded deferred tools, depth.

While a tool of an exec runs, its scope is in the call's frame
(``openprogram.context.Frame.scope``): an exec started inside the tool body
finds its parent there, inherits the menu when it has no ``tools=`` and
always inherits the vetoes (law 7). Menus are derived once per ``Resolution``
(which the gates cache), so a turn costs the same whatever the registry size.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from openprogram._tool_types import quoted, shortened
from openprogram.context import get_frame
from openprogram.events import digest
from openprogram.exceptions import UserError
from openprogram.gates import (
    TOOL_SEARCH_NAME,
    Policy,
    Rejection,
    Resolution,
    catalog_text,
    resolve,
    search_tools,
)
from openprogram.providers.base import ToolSpec
from openprogram.registry import Registry
from openprogram.runtime._options import ExecOptions
from openprogram.tools import Tool, ToolContext, ToolResult, to_tools

if TYPE_CHECKING:
    from openprogram.runtime._run import RunState

__all__ = [
    "TOOL_SEARCH",
    "TOOL_SEARCH_NAME",
    "Menu",
    "ToolScope",
    "build_scope",
    "check_forced_choice",
    "menu_of",
    "parent_scope",
]


_CACHE_SIZE = 256


@dataclass(frozen=True, slots=True, eq=False)
class MenuCore:
    """What depends only on the offered and deferred tools: schemas, names, catalog."""

    tools: Mapping[str, Tool]
    """Callable names → tools: the offered ones, plus ``tool_search`` when tools are deferred."""
    specs: tuple[ToolSpec, ...]
    """The schemas sent to the provider, in menu order."""
    names: tuple[str, ...]
    """The callable names, in menu order."""
    deferred_names: tuple[str, ...]
    """Names of the deferred tools (catalog only)."""
    catalog: str | None
    """One-liners of the deferred tools for the system prompt (``None`` when there are none)."""
    menu_hash: str
    """Hash of the callable names, for ``ToolsResolved``."""
    schema_hashes: dict[str, str]
    """Hash of each tool's parameters schema, filled as calls need them."""


@dataclass(frozen=True, slots=True, eq=False)
class Menu:
    """A ``Resolution`` and everything derived from it; reused by every turn of an exec."""

    resolution: Resolution
    """The gates' verdict this menu was derived from."""
    core: MenuCore
    """Schemas, names and catalog (shared by every resolution with the same tools)."""
    rejected: Mapping[str, str]
    """Hidden tools: name → ``"layer: reason"``."""

    @property
    def tools(self) -> Mapping[str, Tool]:
        """Callable names → tools."""
        return self.core.tools

    @property
    def catalog(self) -> str | None:
        """The deferred-tool catalog for the system prompt, if any."""
        return self.core.catalog

    @property
    def inheritable(self) -> tuple[Tool, ...]:
        """What an inner exec without ``tools=`` starts from: offered and deferred tools."""
        return self.resolution.offered + self.resolution.deferred


_cache_lock = threading.Lock()
_menus: dict[int, Menu] = {}
_cores: dict[tuple[tuple[int, ...], tuple[int, ...]], tuple[Resolution, MenuCore]] = {}


def menu_of(resolution: Resolution) -> Menu:
    """The menu of ``resolution``; schemas are derived once per set of tools, not per exec.

    Resolutions of a registry are cached by the gates, so the identity lookup
    hits; a ``tools=[...]`` list resolves afresh each exec, so the core is
    found again by the identities of its tools.
    """
    menu = _menus.get(id(resolution))
    if menu is not None and menu.resolution is resolution:
        return menu
    key = (tuple(map(id, resolution.offered)), tuple(map(id, resolution.deferred)))
    # The cached entry keeps its resolution (hence its tools) alive, so ids stay unique.
    core = entry[1] if (entry := _cores.get(key)) is not None else _core(resolution)
    _remember(_cores, key, (resolution, core))
    rejected = {name: str(rejection) for name, rejection in resolution.rejected.items()}
    menu = Menu(resolution=resolution, core=core, rejected=rejected)
    _remember(_menus, id(resolution), menu)
    return menu


def _core(resolution: Resolution) -> MenuCore:
    tools: dict[str, Tool] = {tool.name: tool for tool in resolution.offered}
    catalog = None
    if resolution.deferred:
        _no_user_tool_search(resolution)
        tools[TOOL_SEARCH_NAME] = TOOL_SEARCH
        catalog = catalog_text(resolution.deferred)
    return MenuCore(
        tools=tools,
        specs=tuple(tool.spec for tool in tools.values()),
        names=tuple(tools),
        deferred_names=tuple(tool.name for tool in resolution.deferred),
        catalog=catalog,
        menu_hash=digest(list(tools)),
        schema_hashes={},
    )


def _no_user_tool_search(resolution: Resolution) -> None:
    """Refuse a tool of the caller's named ``tool_search`` where the built-in one is needed."""
    for tool in (*resolution.offered, *resolution.deferred):
        if tool.name == TOOL_SEARCH_NAME:
            deferred = ", ".join(t.name for t in resolution.deferred if t is not tool)
            raise UserError(
                f"a tool of yours is named {TOOL_SEARCH_NAME!r} ({tool.origin or 'no origin'}), "
                f"but this menu has deferred tools ({deferred}), which need the built-in "
                f"{TOOL_SEARCH_NAME!r} that loads them; rename your tool (e.g. "
                "@function(name='search_docs')) or pass the deferred tools without defer=True"
            )


def _remember(cache: dict[Any, Any], key: Any, value: Any) -> None:
    with _cache_lock:  # execs on worker threads fill the caches concurrently
        if key not in cache and len(cache) >= _CACHE_SIZE:
            cache.pop(next(iter(cache)))  # the oldest entry: dicts keep insertion order
        cache[key] = value


class ToolScope:
    """The tool scope of one exec (in the frame of each of its tool calls while they run).

    Attributes:
        policy: The effective policy: inherited vetoes, this exec's narrowing, loaded names.
        candidates: What the policy is applied to (a tools list or a registry).
        depth: 1 for a top-level exec, parent depth + 1 inside a tool body.
        run: The run this scope belongs to.
        menu: The current menu (replaced when ``tool_search`` loads tools).
        parent: The scope of the exec whose tool body started this one (``None`` at top level).
    """

    __slots__ = ("_deps", "candidates", "depth", "menu", "parent", "policy", "run")

    def __init__(
        self,
        *,
        policy: Policy,
        candidates: Registry | Sequence[Tool],
        depth: int,
        run: RunState,
        deps: Any,
        parent: ToolScope | None = None,
    ) -> None:
        self.policy = policy
        self.parent = parent
        self.candidates = candidates
        self.depth = depth
        self.run = run
        self._deps = deps
        self.menu = menu_of(resolve(candidates, policy, deps=deps))

    def vet(self, tool: Tool) -> Rejection | None:
        """Why ``tool`` may not run in this exec though it is not on its menu (``None``: it may).

        For a function picked through ``choices=``: the same gates as the menu
        with this exec's policy (its own narrowing and every enclosing exec's
        vetoes), by the tool's real name. Only the two layers that pick the
        menu rather than guard it are left out: the toolset preset and deferral.
        """
        policy = self.policy.replace(toolset=None, loaded=self.policy.loaded | {tool.name})
        return resolve([tool], policy, deps=self._deps).rejected.get(tool.name)

    def load(self, names: set[str]) -> None:
        """Mark deferred tools loaded: their schemas join this exec's next request."""
        if names <= self.policy.loaded:
            return
        self.policy = self.policy.replace(loaded=self.policy.loaded | names)
        self.menu = menu_of(resolve(self.candidates, self.policy, deps=self._deps))
        self.run.tools_resolved(self.menu)


def build_scope(
    *, runtime: Any, options: ExecOptions, parent: ToolScope | None, run: RunState
) -> ToolScope:
    """Resolve the menu of a new exec (docs/concepts.md, "Which tools the model sees").

    ``tools=`` is the candidate list; without it (and without ``toolset=``) an
    exec inside a tool body starts from its parent's menu, a top-level one from
    the runtime's registry. The parent's vetoes always apply (law 7).

    Raises:
        UserError: An unknown toolset (from the gates).
        TypeError: A ``tools=`` entry that is not tool-like.
    """
    own = Policy(
        toolset=options.toolset,
        source=options.tools_source,
        allow=options.tools_allow,
        deny=options.tools_deny or (),
    )
    candidates: Registry | Sequence[Tool]
    if options.tools is not None:
        candidates = to_tools(options.tools)
    elif parent is not None and options.toolset is None:
        candidates = parent.menu.inheritable
    else:
        candidates = runtime.registry
    return ToolScope(
        policy=parent.policy.narrow(own) if parent is not None else own,
        candidates=candidates,
        depth=parent.depth + 1 if parent is not None else 1,
        run=run,
        deps=runtime.deps,
        parent=parent,
    )


def parent_scope() -> ToolScope | None:
    """The scope of the exec whose tool body is running, if any."""
    return get_frame().scope


async def _tool_search(args: Mapping[str, Any], context: ToolContext) -> ToolResult:
    scope = parent_scope()
    if scope is None:
        return ToolResult(content="tool_search can only run inside an exec.", is_error=True)
    deferred = scope.menu.resolution.deferred
    found = search_tools(str(args["query"]), deferred, max_results=int(args.get("max_results", 5)))
    if not found:
        names = ", ".join(tool.name for tool in deferred) or "none"
        return ToolResult(
            content=f"No deferred tool matches {quoted(str(args['query']))}. "
            f"Deferred tools: {shortened(names, 2_000)}. "
            "Search with other words, or use 'select:name1,name2' to load exact names.",
            is_error=True,
        )
    scope.load({tool.name for tool in found})
    specs = [tool.spec for tool in found if tool.name in scope.menu.tools]
    return ToolResult(
        content="Loaded these tools; call them directly from your next reply:\n"
        + json.dumps(specs, ensure_ascii=False),
        value=[spec["name"] for spec in specs],
    )


TOOL_SEARCH = Tool(
    name=TOOL_SEARCH_NAME,
    description=(
        "Load deferred tools listed in the system prompt's catalog so you can call them. "
        "Give keywords, or 'select:name1,name2' for exact names; the matching tools' "
        "schemas are returned and they become callable."
    ),
    parameters={
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "description": "Keywords, or 'select:a,b' for exact names.",
            },
            "max_results": {
                "type": "integer",
                "description": "How many tools to load at most.",
                "default": 5,
                "minimum": 1,
                "maximum": 20,
            },
        },
        "required": ["query"],
        "additionalProperties": False,
    },
    execute=_tool_search,
)
"""The built-in tool added to a menu that has deferred tools (law 6: loading is explicit)."""


def check_forced_choice(name: str | None, menu: Menu, choice: Any) -> None:
    """Reject a ``tool_choice`` that cannot be honoured by this menu, before any request.

    Raises:
        UserError: The forced name is not offered, or ``"required"`` with no tools.
    """
    if name is not None and name not in menu.tools:
        hint = (
            "it is deferred: load it with tool_search first, or pass it in tools= without defer"
            if any(t.name == name for t in menu.resolution.deferred)
            else f"rejected ({menu.rejected[name]})"
            if name in menu.rejected
            else "no such tool was given"
        )
        offered = ", ".join(menu.tools) or "none"
        raise UserError(
            f"exec(tool_choice={choice!r}) forces {name!r}, which is not in this exec's menu "
            f"({hint}); offered tools: {offered}"
        )
    if choice == "required" and not menu.tools:
        raise UserError(
            "exec(tool_choice='required') needs at least one tool, but the menu is empty; "
            "pass tools=[...] or use tool_choice='auto'"
        )
