"""``LazyTool``: a registry card that carries gate metadata and imports its target on demand.

A card is what ``Registry.lazy`` and ``Registry.load_entry_points`` register.
Gating reads only the card's own metadata (name, description, toolset,
unsafe_in, requires_env, predicates, defer, expose), so a registry of
thousands of plugins can be resolved without importing any of them. The
target module is imported the first time the card is offered, called or
loaded by ``tool_search``; from then on the card delegates schema and
execution to the loaded tool.

An import failure is remembered: the card stays unavailable with that reason
(``load_error``) instead of retrying the import on every turn.
"""

from __future__ import annotations

import importlib
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from openprogram.exceptions import UserError
from openprogram.tools import Tool, ToolContext, ToolResult, to_tool

__all__ = ["TARGET_PATTERN", "LazyTool"]

TARGET_PATTERN = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")
"""``"pkg.module:attr"`` (``attr`` may be dotted, e.g. ``"pkg.mod:Toolbox.search"``)."""

_EXECUTION_FIELDS = ("kind", "requires_approval", "parallel_safe", "timeout", "max_result_chars")
"""Copied from the loaded tool: how a tool runs is its author's business, not the card's."""

# ``Tool`` stores ``fn`` in a slot; the card shadows it with a loading property and
# keeps the value in the base slot through this descriptor.
_FN_SLOT: Any = Tool.__dict__["fn"]


def _not_loaded(args: Mapping[str, Any]) -> Any:
    # Never called: ``LazyTool.execute`` loads the target first. Tool() just needs
    # something runnable at construction time.
    raise RuntimeError("lazy card executed before loading")  # pragma: no cover


class LazyTool(Tool):
    """A registered card whose implementation lives in a module imported on first use.

    Gate metadata is the card's and never changes on load, so a resolution
    computed before the import stays valid after it. How the tool runs
    (``kind``, ``requires_approval``, ``parallel_safe``, ``timeout``,
    ``max_result_chars``) comes from the loaded tool; until then the card
    reports ``requires_approval=True`` and ``parallel_safe=False``, so a caller
    that reads them too early errs on the safe side.

    Args:
        name: Tool name the model sees (the target's own name is not used).
        target: ``"pkg.module:attr"``; ``attr`` is a ``Tool``, an agentic
            function, a plain function or any other tool-like value.
        description: Model-facing description. ``None`` (entry-point cards)
            uses ``placeholder`` until the target is loaded, then the target's.
        placeholder: Description of an unloaded card without one.
        origin: Where the card was declared (shown in duplicate-name errors).
        toolset: L2b: preset names the tool belongs to.
        unsafe_in: L3: channel sources where it is hidden.
        requires_env: L4: environment variables that must be set and non-empty.
        check_fn: L4: ``check_fn() -> bool``, asked on every resolution.
        can_use: L4: ``can_use(GateContext) -> bool``, asked on every resolution.
        defer: L6: listed in the catalog until loaded through ``tool_search``.
        expose: L2: ``False`` never offers it to a model.
        summary: The catalog line of a deferred tool (else the description's first line).
        label: Human-readable name for UIs and traces.
    """

    __slots__ = (
        "_load_error",
        "_loading",
        "_lock",
        "_module_name",
        "_placeholder",
        "_target",
        "_target_tool",
    )

    def __init__(
        self,
        *,
        name: str,
        target: str,
        description: str | None = None,
        placeholder: str | None = None,
        origin: str | None = None,
        toolset: str | Sequence[str] = (),
        unsafe_in: str | Sequence[str] = (),
        requires_env: str | Sequence[str] = (),
        check_fn: Callable[[], bool] | None = None,
        can_use: Callable[[Any], bool] | None = None,
        defer: bool = False,
        expose: bool = True,
        summary: str | None = None,
        label: str | None = None,
    ) -> None:
        if not isinstance(target, str) or not TARGET_PATTERN.match(target):
            raise UserError(
                f"lazy tool {name!r}: target must look like 'pkg.module:attr', got {target!r}"
            )
        if description is not None and not isinstance(description, str):
            raise UserError(f"lazy tool {name!r}: description must be a string")
        super().__init__(
            name=name,
            description=description,
            execute=_not_loaded,
            toolset=toolset,
            unsafe_in=unsafe_in,
            requires_env=requires_env,
            check_fn=check_fn,
            can_use=can_use,
            defer=defer,
            expose=expose,
            summary=summary,
            label=label,
            requires_approval=True,
            parallel_safe=False,
            origin=origin or f"lazy card {name!r} -> {target}",
        )
        self._target = target
        self._module_name = target.partition(":")[0]
        self._placeholder = placeholder or f"{name} (loaded from {target} on first use)"
        self._target_tool: Tool | None = None
        self._load_error: str | None = None
        self._loading = False
        self._lock = threading.RLock()

    # -- card facts (never import) ---------------------------------------------------------

    @property
    def target(self) -> str:
        """The ``"pkg.module:attr"`` this card loads."""
        return self._target

    @property
    def module_name(self) -> str:
        """The module part of ``target``."""
        return self._module_name

    @property
    def is_loaded(self) -> bool:
        """Whether the target was imported successfully."""
        return self._target_tool is not None

    @property
    def load_error(self) -> str | None:
        """Why loading failed (``None`` if it has not failed)."""
        return self._load_error

    @property
    def loading(self) -> bool:
        """Whether the target module is being imported right now."""
        return self._loading

    @property
    def description(self) -> str:
        """The card's description; for cards without one, the target's once loaded."""
        if self._description is not None:
            return self._description
        if self._target_tool is not None:
            return self._target_tool.description
        return self._placeholder

    # -- loading ---------------------------------------------------------------------------

    def load(self) -> Tool:
        """Import the target (once) and return this card, now loaded.

        Raises:
            ImportError: The target could not be imported or is not a tool; the
                message names the target. The failure is remembered.
        """
        self._loaded_target()
        return self

    @property
    def target_tool(self) -> Tool:
        """The loaded tool the card delegates to (imports on first access)."""
        return self._loaded_target()

    def _loaded_target(self) -> Tool:
        tool = self._target_tool
        if tool is not None:
            return tool
        with self._lock:
            if self._target_tool is not None:
                return self._target_tool
            if self._load_error is not None:
                raise ImportError(self._load_error)
            self._loading = True
            try:
                tool = self._import_target()
            except ImportError as exc:
                self._load_error = str(exc)
                raise
            finally:
                self._loading = False
            for field in _EXECUTION_FIELDS:
                setattr(self, field, getattr(tool, field))
            self._target_tool = tool
            return tool

    def _import_target(self) -> Tool:
        module_name, _, attr_path = self._target.partition(":")
        where = f"lazy tool {self.name!r}: cannot load target {self._target!r}"
        try:
            obj: Any = importlib.import_module(module_name)
            for part in attr_path.split("."):
                obj = getattr(obj, part)
            return to_tool(obj)
        except Exception as exc:
            # turns it into one typed failure that fails this tool closed, never the run
            raise ImportError(f"{where}: {type(exc).__name__}: {exc}", name=module_name) from exc

    # -- delegated surface (imports) -------------------------------------------------------

    @property  # loads the target on access, unlike Tool's plain slot
    def fn(self) -> Callable[..., Any] | None:
        """The loaded tool's Python function (imports the target)."""
        return self._loaded_target().fn

    @fn.setter
    def fn(self, value: Callable[..., Any] | None) -> None:
        # Only Tool.__init__ writes here (None); the card's function is always the target's.
        _FN_SLOT.__set__(self, value)

    @property
    def parameters(self) -> dict[str, Any]:
        """The loaded tool's JSON Schema (imports the target)."""
        return self._loaded_target().parameters

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the loaded tool's function directly (imports the target)."""
        return self._loaded_target()(*args, **kwargs)

    async def execute(
        self, args: Mapping[str, Any], context: ToolContext | None = None
    ) -> ToolResult:
        """Load the target and run it; an import failure is an error result, never raised."""
        try:
            tool = self._loaded_target()
        except ImportError as exc:
            return ToolResult(content=f"Tool {self.name!r} is unavailable: {exc}", is_error=True)
        context = context if context is not None else ToolContext(tool_name=self.name)
        return await tool.execute(args, context)

    def __repr__(self) -> str:
        state = "loaded" if self.is_loaded else ("failed" if self._load_error else "not loaded")
        return f"LazyTool({self.name!r}, target={self._target!r}, {state})"
