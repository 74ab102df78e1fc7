"""pydantic-ai: ``Tool(fn)``, ``Agent`` and its shipped ``FunctionModel`` fake.

Peer APIs used: ``pydantic_ai.Tool`` (schema derived in its constructor, what
``@agent.tool_plain`` does too), ``Tool.function_schema.validator`` +
``FunctionSchema.call`` (the validate-and-run step of its ToolManager),
``Agent.run`` with ``pydantic_ai.models.function.FunctionModel``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from pydantic_ai import Agent, RequestUsage, RunContext, RunUsage, Tool, UsageLimits
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    ModelResponsePart,
    TextPart,
    ToolCallPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.tools import ToolDefinition

from ._script import Script, menu_bytes

IMPORT_TOP = "import pydantic_ai"
IMPORT_LOOP = "import pydantic_ai, pydantic_ai.models.function"


def tool_schema(fn: Callable[..., Any]) -> dict[str, Any]:
    """Build a ``Tool`` and return the parameters schema it derived."""
    return Tool(fn).tool_def.parameters_json_schema


def validated_call(fn: Callable[..., Any]) -> Callable[[dict[str, Any]], Awaitable[Any]]:
    """Validate with the tool's pydantic validator, then run as its ToolManager does."""
    schema = Tool(fn).function_schema
    ctx = RunContext(deps=None, model=FunctionModel(_never_called), usage=RunUsage())

    async def call(args: dict[str, Any]) -> Any:
        return await schema.call(schema.validator.validate_python(args), ctx)

    return call


def _never_called(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    raise AssertionError("the validated-call benchmark never asks the model")


class _ScriptedModel:
    """The ``FunctionModel`` callback: replays a script, one turn per request.

    It is async and reports usage, like a real model: a sync callback would be
    run in a worker thread, and a reply without usage makes ``FunctionModel``
    estimate tokens over the whole history on every request, a cost of the
    fake alone.
    """

    def __init__(self, script: Script) -> None:
        self.script = script
        self.turn = 0
        self.last_tools: list[ToolDefinition] = []

    async def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        reply = self.script[self.turn]
        self.turn += 1
        self.last_tools = info.function_tools
        if isinstance(reply, str):
            parts: list[ModelResponsePart] = [TextPart(reply)]
        else:
            parts = [
                ToolCallPart(call.name, call.args, tool_call_id=f"call_{self.turn}_{i}")
                for i, call in enumerate(reply)
            ]
        return ModelResponse(parts=parts, usage=RequestUsage(input_tokens=1, output_tokens=1))


class _PydanticAIAgent:
    def __init__(self, tools: Sequence[Callable[..., Any]], script: Script) -> None:
        self._model = _ScriptedModel(script)
        self._agent = Agent(FunctionModel(self._model), tools=[Tool(fn) for fn in tools])
        # The default request_limit (50) would stop a long script; lift it.
        self._limits = UsageLimits(request_limit=len(script) + 1)

    async def run(self) -> str:
        self._model.turn = 0
        result = await self._agent.run("go", usage_limits=self._limits)
        return result.output

    def menu_bytes(self) -> int | None:
        specs = [
            {"name": t.name, "description": t.description, "parameters": t.parameters_json_schema}
            for t in self._model.last_tools
        ]
        return menu_bytes(specs)

    def reported_prompt_bytes(self) -> int | None:
        return None  # this framework reports no prompt size


def make_agent(tools: Sequence[Callable[..., Any]], script: Script) -> _PydanticAIAgent:
    """Return an ``Agent`` over ``tools`` driven by a scripted ``FunctionModel``."""
    return _PydanticAIAgent(tools, script)
