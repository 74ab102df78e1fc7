"""The runtime: ``Runtime.exec``, the tool loop, the executor, nesting and streaming.

See docs/concepts.md and docs/design.md. ``Runtime`` is also installed as the factory of the
default runtime, so ``@agentic_function`` called with no runtime anywhere gets
``Runtime()`` (which reads ``OPENPROGRAM_MODEL`` at its first exec).
"""

from __future__ import annotations

from openprogram.context import set_default_runtime, set_default_runtime_factory
from openprogram.runtime._approval import Approval
from openprogram.runtime._conversation import DEFAULT_TRIM, Conversation, Trim
from openprogram.runtime._executor import MAX_PARALLEL, QUEUED_MESSAGE_SKIP
from openprogram.runtime._options import MAX_ITERATIONS_CAP, ExecKwargs, ExecOptions
from openprogram.runtime._result import RunResult
from openprogram.runtime._run_tools import run_tools, run_tools_sync
from openprogram.runtime._runtime import MODEL_ENV_VAR, Runtime
from openprogram.runtime._scope import TOOL_SEARCH_NAME, ToolScope
from openprogram.runtime._stream import (
    StreamEvent,
    StreamFinal,
    StreamProgress,
    StreamTextDelta,
    StreamThinkingDelta,
    StreamToolCall,
    StreamToolResult,
)
from openprogram.runtime._tree import Tree, TreeResult

__all__ = [
    "DEFAULT_TRIM",
    "MAX_ITERATIONS_CAP",
    "MAX_PARALLEL",
    "MODEL_ENV_VAR",
    "QUEUED_MESSAGE_SKIP",
    "TOOL_SEARCH_NAME",
    "Approval",
    "Conversation",
    "ExecKwargs",
    "ExecOptions",
    "RunResult",
    "Runtime",
    "StreamEvent",
    "StreamFinal",
    "StreamProgress",
    "StreamTextDelta",
    "StreamThinkingDelta",
    "StreamToolCall",
    "StreamToolResult",
    "ToolScope",
    "Tree",
    "TreeResult",
    "Trim",
    "run_tools",
    "run_tools_sync",
    "set_default_runtime",
]

set_default_runtime_factory(Runtime)
