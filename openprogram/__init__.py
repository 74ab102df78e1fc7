"""openprogram: write programs as nested agentic functions.

``@function`` and ``@agentic_function`` turn typed, documented Python
functions into tools; ``Runtime.exec`` runs the tool-calling loop against a
model provider; an agentic function's body calls ``runtime.exec`` again and
inherits its caller's tool menu. See the README and ``docs/``.

``import openprogram`` loads what defining tools needs (the decorators, the
registry, the exceptions). The names that run them (``Runtime``, the gates,
the messages, the provider classes) load the first time they are used, since
they bring asyncio (and with it ``ssl``) and the model wires; see
``docs/design.md``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from openprogram._pause import PAUSE, Pause, PendingCall
from openprogram.budget import Budget, BudgetUsage
from openprogram.context import get_current_runtime, set_default_runtime
from openprogram.decorators import AgenticFunction, agentic_function, function
from openprogram.exceptions import (
    BudgetExceeded,
    ConfigurationError,
    DecisionError,
    InvalidJSONError,
    InvalidSchemaError,
    JournalDivergence,
    LLMError,
    MaxIterationsExceeded,
    MissingSubmissionError,
    OpenProgramError,
    RefusalError,
    RunFailed,
    RunPaused,
    SchemaError,
    StructuredOutputError,
    ToolError,
    UnsupportedStructuredOutputError,
    UserError,
    ValidationFailedError,
)
from openprogram.registry import LazyTool, Registry, default_registry
from openprogram.tools import Tool, ToolContext, ToolResult

if TYPE_CHECKING:
    from openprogram.gates import GateContext, Policy, Rejection, Resolution, explain, resolve
    from openprogram.messages import (
        AssistantMessage,
        ImageContent,
        TextContent,
        ThinkingContent,
        ToolCall,
        ToolResultMessage,
        Usage,
        UserMessage,
    )
    from openprogram.providers import (
        AnthropicProvider,
        BedrockProvider,
        FallbackProvider,
        GeminiProvider,
        LocalProvider,
        OpenAIProvider,
        OpenAIResponsesProvider,
    )
    from openprogram.runtime import (
        Conversation,
        RunResult,
        Runtime,
        Tree,
        TreeResult,
        run_tools,
        run_tools_sync,
    )

__version__ = "0.1.0"

__all__ = [  # noqa: RUF022 - plainly sorted (PAUSE among the P names), as a test checks
    "AgenticFunction",
    "AnthropicProvider",
    "AssistantMessage",
    "BedrockProvider",
    "Budget",
    "BudgetExceeded",
    "BudgetUsage",
    "ConfigurationError",
    "Conversation",
    "DecisionError",
    "FallbackProvider",
    "GateContext",
    "GeminiProvider",
    "ImageContent",
    "InvalidJSONError",
    "InvalidSchemaError",
    "JournalDivergence",
    "LLMError",
    "LazyTool",
    "LocalProvider",
    "MaxIterationsExceeded",
    "MissingSubmissionError",
    "OpenAIProvider",
    "OpenAIResponsesProvider",
    "OpenProgramError",
    "PAUSE",
    "Pause",
    "PendingCall",
    "Policy",
    "RefusalError",
    "Registry",
    "Rejection",
    "Resolution",
    "RunFailed",
    "RunPaused",
    "RunResult",
    "Runtime",
    "SchemaError",
    "StructuredOutputError",
    "TextContent",
    "ThinkingContent",
    "Tool",
    "ToolCall",
    "ToolContext",
    "ToolError",
    "ToolResult",
    "ToolResultMessage",
    "Tree",
    "TreeResult",
    "UnsupportedStructuredOutputError",
    "Usage",
    "UserError",
    "UserMessage",
    "ValidationFailedError",
    "agentic_function",
    "default_registry",
    "explain",
    "function",
    "get_current_runtime",
    "resolve",
    "run_tools",
    "run_tools_sync",
    "set_default_runtime",
]

_LAZY = {
    "AnthropicProvider": "openprogram.providers",
    "AssistantMessage": "openprogram.messages",
    "BedrockProvider": "openprogram.providers",
    "Conversation": "openprogram.runtime",
    "FallbackProvider": "openprogram.providers",
    "GateContext": "openprogram.gates",
    "GeminiProvider": "openprogram.providers",
    "ImageContent": "openprogram.messages",
    "LocalProvider": "openprogram.providers",
    "OpenAIProvider": "openprogram.providers",
    "OpenAIResponsesProvider": "openprogram.providers",
    "Policy": "openprogram.gates",
    "Rejection": "openprogram.gates",
    "Resolution": "openprogram.gates",
    "RunResult": "openprogram.runtime",
    "Runtime": "openprogram.runtime",
    "TextContent": "openprogram.messages",
    "ThinkingContent": "openprogram.messages",
    "ToolCall": "openprogram.messages",
    "ToolResultMessage": "openprogram.messages",
    "Tree": "openprogram.runtime",
    "TreeResult": "openprogram.runtime",
    "Usage": "openprogram.messages",
    "UserMessage": "openprogram.messages",
    "explain": "openprogram.gates",
    "resolve": "openprogram.gates",
    "run_tools": "openprogram.runtime",
    "run_tools_sync": "openprogram.runtime",
}
"""Names loaded on first use, and the module each comes from."""

_SUBPACKAGES = frozenset({"events", "gates", "messages", "providers", "runtime", "structured"})
"""Modules ``import openprogram`` used to load, still reachable as attributes once asked for."""


def __getattr__(name: str) -> Any:
    # Loaded on first use for import cost (asyncio, ssl, httpx, the wires): see _LAZY.
    if name in _SUBPACKAGES:
        return importlib.import_module(f"openprogram.{name}")
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'openprogram' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
