"""Why a call the model made may not run: the checks before approval, each with its text.

Not on the menu (law 8: never executed; the text lists the menu, or says
how to load a deferred tool), arguments that are not a JSON object, an
agentic function at the nesting depth limit. The texts quote the model's
own strings, bounded whatever it sent.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from openprogram._tool_types import MAX_QUOTED, quoted, shortened, truncate
from openprogram.events import ToolFailureKind
from openprogram.messages import ToolCall
from openprogram.tools import Tool

__all__ = ["refusal_of"]

_MAX_REFUSAL = 2_000


def refusal_of(
    call: ToolCall,
    tool: Tool | None,
    tools: Mapping[str, Tool],
    deferred: Collection[str],
    depth_limit: int | None,
) -> tuple[ToolFailureKind, str] | None:
    """Why a started call may not run (``(failure kind, text for the model)``), or ``None``.

    Args:
        call: The model's call.
        tool: The menu's tool of that name (``None``: not on the menu).
        tools: The menu.
        deferred: Deferred names not loaded yet.
        depth_limit: ``max_depth`` when the calling exec is at it, else ``None``.
    """
    refusal = _refusal_text(call, tool, tools, deferred, depth_limit)
    # Refusals quote the model's own strings: bounded whatever it sent (tool results are too).
    return None if refusal is None else (refusal[0], truncate(refusal[1], _MAX_REFUSAL))


def _refusal_text(
    call: ToolCall,
    tool: Tool | None,
    tools: Mapping[str, Tool],
    deferred: Collection[str],
    depth_limit: int | None,
) -> tuple[ToolFailureKind, str] | None:
    name = call.name
    if tool is None:
        if name in deferred:
            text = (
                f"Tool {name!r} is deferred and not loaded yet: call tool_search with "
                f"query 'select:{name}' first, then call {name!r}."
            )
        else:
            names = list(tools)
            shown = ", ".join(names[:30]) + (
                f" (and {len(names) - 30} more)" if len(names) > 30 else ""
            )
            text = (
                f"Tool {quoted(name)} is not available in this call: it is not in the menu "
                f"offered to you. Available tools: {shown or 'none'}."
            )
        return "not_in_menu", text
    if call.arguments_error is not None:
        why = shortened(call.arguments_error, 4 * MAX_QUOTED)
        return "malformed_arguments", (
            f"The arguments of your call to {name!r} are not a valid JSON object "
            f"({why}). Call {name!r} again with a JSON object matching its "
            "parameters schema."
        )
    if depth_limit is not None and tool.kind == "agentic":
        return "depth", (
            f"Tool {name!r} was not run: the nesting depth limit of agentic functions "
            f"(max_depth={depth_limit}) was reached. Answer with what you have instead."
        )
    return None
