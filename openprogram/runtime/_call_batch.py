"""``Batch``: what the calls of one batch run with (the menu, hooks, budget, position, journal)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from openprogram.durable import Journal
from openprogram.runtime._approval import Approval
from openprogram.runtime._budget import Ledger
from openprogram.runtime._run import Emitter
from openprogram.runtime._scope import ToolScope
from openprogram.tools import Tool

__all__ = ["Batch"]


@dataclass(slots=True, kw_only=True)
class Batch:
    """What the calls of one batch run with."""

    tools: Mapping[str, Tool]
    """The menu: the only names that may run (law 8)."""
    emitter: Emitter
    """Where events go."""
    runtime: Any = None
    """The runtime running the calls (``ToolContext.runtime`` gets a view of it in an exec)."""
    deps: Any = None
    """Put into ``ToolContext.deps``."""
    approval: Approval | None = None
    """The approval hook, if any."""
    sequential: bool = False
    """Run calls one after another even when all are ``parallel_safe``."""
    deferred: Collection[str] = ()
    """Deferred names not loaded yet (for a helpful error when one is called)."""
    depth_limit: int | None = None
    """``max_depth`` when the calling exec is at it (agentic calls are refused), else ``None``."""
    interrupted: Callable[[], bool] | None = None
    """Returns ``True`` when a steering message is queued (unstarted calls are skipped)."""
    failures: dict[str, int] | None = None
    """Failure counts per exact call, for the repeated-failure rule (``None``: off)."""
    schema_hashes: dict[str, str] = field(default_factory=dict)
    """Parameters-schema hash per tool name (shared by the turns of a menu)."""
    scope: ToolScope | None = None
    """The calling exec's tool scope (``None``: ``run_tools``; calls join the caller's frame)."""
    ledger: Ledger | None = None
    """The run tree's budget, charged for every call that runs (``None``: no budget)."""
    depth: int = 1
    """Nesting depth of the calling exec (thread slots keep room for deeper levels)."""
    max_depth: int = 8
    """The calling runtime's ``max_depth``."""
    held: int = 0
    """Thread slots held by the bodies the calling exec runs inside."""
    turn: tuple[int, ...] = ()
    """The calling exec's path plus the model call answered: call ``k`` is at ``turn + (k,)``."""
    journal: Journal | None = None
    """The run tree's journal, when it is a durable run."""
    turn_key: str = ""
    """``turn`` as journal key text (durable runs): call ``k`` is at ``f"{turn_key}.{k}"``."""
