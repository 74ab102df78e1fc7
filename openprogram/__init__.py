"""openprogram: write programs as nested agentic functions.

``@function`` and ``@agentic_function`` turn typed, documented Python
functions into tools; ``Runtime.exec`` runs the tool-calling loop against a
model provider; an agentic function's body calls ``runtime.exec`` again and
inherits its caller's tool menu. See the README and ``docs/``.

Provider classes (``OpenAIProvider`` …) are importable from here too; they
load on first access so that ``import openprogram`` stays light.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from openprogram.budget import Budget, BudgetUsage
from openprogram.context import get_current_runtime
from openprogram.decorators import AgenticFunction, agentic_function, function
from openprogram.exceptions import (
    BudgetExceeded,
    ConfigurationError,
    DecisionError,
    InvalidJSONError,
    InvalidSchemaError,
    LLMError,
    MaxIterationsExceeded,
    MissingSubmissionError,
    OpenProgramError,
    RefusalError,
    SchemaError,
    StructuredOutputError,
    ToolError,
    UnsupportedStructuredOutputError,
    UserError,
    ValidationFailedError,
)
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
from openprogram.registry import LazyTool, Registry, default_registry
from openprogram.runtime import (
    Conversation,
    RunResult,
    Runtime,
    run_tools,
    run_tools_sync,
    set_default_runtime,
)
from openprogram.tools import Tool, ToolContext, ToolResult

if TYPE_CHECKING:
    from openprogram.providers import (
        AnthropicProvider,
        BedrockProvider,
        GeminiProvider,
        LocalProvider,
        OpenAIProvider,
        OpenAIResponsesProvider,
    )

__version__ = "0.1.0"

__all__ = [
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
    "GateContext",
    "GeminiProvider",
    "ImageContent",
    "InvalidJSONError",
    "InvalidSchemaError",
    "LLMError",
    "LazyTool",
    "LocalProvider",
    "MaxIterationsExceeded",
    "MissingSubmissionError",
    "OpenAIProvider",
    "OpenAIResponsesProvider",
    "OpenProgramError",
    "Policy",
    "RefusalError",
    "Registry",
    "Rejection",
    "Resolution",
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
    "BedrockProvider": "openprogram.providers",
    "GeminiProvider": "openprogram.providers",
    "LocalProvider": "openprogram.providers",
    "OpenAIProvider": "openprogram.providers",
    "OpenAIResponsesProvider": "openprogram.providers",
}


def __getattr__(name: str) -> Any:
    # Provider classes pull in httpx; load them only when asked for.
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'openprogram' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
