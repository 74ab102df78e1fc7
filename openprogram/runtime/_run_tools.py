"""The executor on its own (``run_tools``): tool calls run without a model."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from openprogram.context import get_current_runtime
from openprogram.events import Observer
from openprogram.exceptions import UserError
from openprogram.messages import AssistantMessage, ToolCall, ToolResultMessage
from openprogram.runtime._approval import Approval
from openprogram.runtime._executor import Batch, run_batch
from openprogram.runtime._run import Emitter
from openprogram.runtime._scope import parent_scope
from openprogram.runtime._sync import run_sync
from openprogram.tools import Tool, ToolLike, to_tools

__all__ = ["run_tools", "run_tools_sync"]


async def run_tools(
    calls: Sequence[ToolCall] | AssistantMessage,
    tools: Sequence[ToolLike],
    *,
    deps: Any = None,
    approval: Approval | None = None,
    observers: Sequence[Observer] = (),
) -> list[ToolResultMessage]:
    """Run tool calls without a model, by the same rules as ``exec``.

    Validation, concurrency, call order, timeouts, approval and one result per
    call are the same as inside ``exec``; a name not in ``tools`` is answered
    with an error result and never run.

    Args:
        calls: The calls, or an ``AssistantMessage`` whose calls to run.
        tools: The tools the calls may name (any tool-like, see ``to_tools``).
        deps: Given to tools as ``ToolContext.deps``.
        approval: ``approval(call) -> None | str`` consulted before every call.
        observers: Receive the trace events of the calls.

    Returns:
        One ``ToolResultMessage`` per call, in call order.

    Example:
        >>> from openprogram.messages import ToolCall
        >>> from openprogram.runtime import run_tools_sync
        >>> from openprogram.tools import Tool
        >>> echo = Tool(name="echo", execute=lambda args: args["text"],
        ...             parameters={"type": "object", "properties": {"text": {"type": "string"}}})
        >>> run_tools_sync([ToolCall("c1", "echo", {"text": "hello"})], [echo])[0].content
        'hello'
    """
    menu: dict[str, Tool] = {}
    for tool in to_tools(tools):
        if tool.name in menu:
            raise UserError(f"run_tools(tools=...): two tools are named {tool.name!r}; rename one")
        menu[tool.name] = tool
    call_list = calls.tool_calls if isinstance(calls, AssistantMessage) else list(calls)
    scope = parent_scope()  # run inside a tool body: join that run's event tree
    emitter = Emitter(parent=scope.run if scope is not None else None, observers=observers)
    batch = Batch(
        tools=menu, emitter=emitter, runtime=get_current_runtime(), deps=deps, approval=approval
    )
    try:
        return await run_batch(call_list, batch)
    finally:
        await emitter.delivered(None)


def run_tools_sync(
    calls: Sequence[ToolCall] | AssistantMessage,
    tools: Sequence[ToolLike],
    *,
    deps: Any = None,
    approval: Approval | None = None,
    observers: Sequence[Observer] = (),
) -> list[ToolResultMessage]:
    """``run_tools`` for plain (non-async) code; works inside a running event loop too."""
    return run_sync(
        lambda: run_tools(calls, tools, deps=deps, approval=approval, observers=observers)
    )
