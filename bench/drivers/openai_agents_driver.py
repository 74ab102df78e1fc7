"""openai-agents: ``@function_tool``, ``Runner.run`` and a minimal fake ``Model``.

The SDK ships no fake model publicly; its own tests use a ``FakeModel``
subclass of ``agents.Model``. :class:`_ScriptedModel` is that pattern written
against the public ``Model`` interface (``get_response``/``stream_response``).
Tracing is disabled, since its default exporter would post to a server.

Peer APIs used: ``agents.function_tool`` (schema derived at decoration),
``FunctionTool.on_invoke_tool`` (parse JSON, validate, run: what the runner
calls), ``agents.Runner.run`` with ``RunConfig(tracing_disabled=True)``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

from agents import (
    Agent,
    FunctionTool,
    Model,
    ModelResponse,
    RunConfig,
    Runner,
    Tool,
    Usage,
    function_tool,
)
from agents.tool_context import ToolContext
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputItem,
    ResponseOutputMessage,
    ResponseOutputText,
)

from ._script import Script, Turn, menu_bytes

IMPORT_TOP = "import agents"
IMPORT_LOOP = "import agents"


def tool_schema(fn: Callable[..., Any]) -> dict[str, Any]:
    """Decorate with ``@function_tool`` and return the schema it derived."""
    return function_tool(fn).params_json_schema


def validated_call(fn: Callable[..., Any]) -> Callable[[dict[str, Any]], Awaitable[Any]]:
    """Invoke the tool the way the runner does: JSON arguments in, result out."""
    tool = function_tool(fn)

    async def call(args: dict[str, Any]) -> Any:
        # The runner hands over the model's raw JSON text; its parsing is part
        # of this SDK's validation path, so it stays in the measured call.
        arguments = json.dumps(args)
        ctx = ToolContext(
            context=None, tool_name=tool.name, tool_call_id="call_1", tool_arguments=arguments
        )
        return await tool.on_invoke_tool(ctx, arguments)

    return call


def _reply(turn: Turn, index: int) -> list[ResponseOutputItem]:
    if isinstance(turn, str):
        text = ResponseOutputText(type="output_text", text=turn, annotations=[])
        return [
            ResponseOutputMessage(
                id=f"msg_{index}",
                type="message",
                role="assistant",
                status="completed",
                content=[text],
            )
        ]
    return [
        ResponseFunctionToolCall(
            type="function_call",
            id=f"fc_{index}_{i}",
            call_id=f"call_{index}_{i}",
            name=call.name,
            arguments=json.dumps(call.args),
        )
        for i, call in enumerate(turn)
    ]


class _ScriptedModel(Model):
    """A fake ``agents.Model`` that replays a script, one turn per request."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.turn = 0
        self.last_tools: list[Any] = []

    async def get_response(  # noqa: PLR0917  # the SDK's abstract signature
        self,
        system_instructions: str | None,
        input: Any,  # the SDK's parameter name
        model_settings: Any,
        tools: list[Any],
        output_schema: Any,
        handoffs: list[Any],
        tracing: Any,
        *,
        previous_response_id: str | None,
        conversation_id: str | None,
        prompt: Any,
    ) -> ModelResponse:
        """Return the next scripted turn as Responses-API output items."""
        reply = self.script[self.turn]
        self.turn += 1
        self.last_tools = tools
        return ModelResponse(output=_reply(reply, self.turn), usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        """Streaming is not benchmarked."""
        raise NotImplementedError


class _OpenAIAgentsAgent:
    def __init__(self, tools: Sequence[Callable[..., Any]], script: Script) -> None:
        self._model = _ScriptedModel(script)
        function_tools: list[Tool] = [function_tool(fn) for fn in tools]
        self._agent = Agent(name="bench", model=self._model, tools=function_tools)
        self._max_turns = len(script) + 1
        self._config = RunConfig(tracing_disabled=True)

    async def run(self) -> str:
        self._model.turn = 0
        result = await Runner.run(
            self._agent, "go", max_turns=self._max_turns, run_config=self._config
        )
        return str(result.final_output)

    def menu_bytes(self) -> int | None:
        return menu_bytes(
            [
                {"name": t.name, "description": t.description, "parameters": t.params_json_schema}
                for t in self._model.last_tools
                if isinstance(t, FunctionTool)
            ]
        )

    def reported_prompt_bytes(self) -> int | None:
        return None  # this framework reports no prompt size


def make_agent(tools: Sequence[Callable[..., Any]], script: Script) -> _OpenAIAgentsAgent:
    """Return an ``agents.Agent`` over ``tools`` driven by a scripted fake ``Model``."""
    return _OpenAIAgentsAgent(tools, script)
