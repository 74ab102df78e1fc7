"""``Tool``, the one unit every layer handles, and the coercion of tool-like values.

A ``Tool`` couples a model-facing surface (name, description, JSON Schema
parameters) with a way to run it (a Python function, or an ``execute``
callable for hand-written specs) and the metadata the gates read
(``_tool.py``); ``to_tool``/``to_tools`` turn what ``tools=[...]`` accepts
into tools (``_coerce.py``); ``ToolContext`` and ``ToolResult`` live in
``openprogram._tool_types``.
"""

from openprogram._tool_types import (
    TOOL_NAME_PATTERN,
    ToolContext,
    ToolErrorKind,
    ToolResult,
    result_text,
    truncate,
)
from openprogram.tools._coerce import to_tool, to_tools
from openprogram.tools._tool import (
    DEFAULT_MAX_RESULT_CHARS,
    ApprovalRule,
    P,
    R,
    Tool,
    ToolEffect,
    ToolKind,
    ToolLike,
)

__all__ = [
    "DEFAULT_MAX_RESULT_CHARS",
    "TOOL_NAME_PATTERN",
    "ApprovalRule",
    "P",
    "R",
    "Tool",
    "ToolContext",
    "ToolEffect",
    "ToolErrorKind",
    "ToolKind",
    "ToolLike",
    "ToolResult",
    "result_text",
    "to_tool",
    "to_tools",
    "truncate",
]
