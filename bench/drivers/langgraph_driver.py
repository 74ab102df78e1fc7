"""langchain-core ``@tool`` and langgraph's ``create_react_agent``.

Peer APIs used: ``langchain_core.tools.tool`` (builds the args model at
decoration) + ``convert_to_openai_tool`` (the JSON Schema that chat models'
``bind_tools`` send), ``BaseTool.ainvoke`` (validate + run),
``langgraph.prebuilt.create_react_agent`` (deprecated in langgraph 1.x in
favour of ``langchain.agents.create_agent``, which needs the separate
``langchain`` package; still shipped in ``langgraph-prebuilt``) driven by
langchain-core's ``FakeMessagesListChatModel``.
"""

from __future__ import annotations

import warnings
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatResult
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.prebuilt import create_react_agent
from pydantic import Field

from ._script import Script, Turn, menu_bytes

IMPORT_TOP = "import langchain_core"
IMPORT_LOOP = "import langchain_core.language_models.fake_chat_models, langgraph.prebuilt"


def tool_schema(fn: Callable[..., Any]) -> dict[str, Any]:
    """Decorate with ``@tool`` and return the schema ``bind_tools`` would send."""
    parameters: dict[str, Any] = convert_to_openai_tool(tool(fn))["function"]["parameters"]
    return parameters


def validated_call(fn: Callable[..., Any]) -> Callable[[dict[str, Any]], Awaitable[Any]]:
    """Return ``BaseTool.ainvoke``: validate against the args model, then run."""
    return tool(fn).ainvoke


class _ToolCallingFakeModel(FakeMessagesListChatModel):
    """``FakeMessagesListChatModel`` that accepts ``bind_tools`` and stays async.

    The stock fake raises on ``bind_tools`` and, like every model without an
    ``_agenerate``, hops to a worker thread per call; a real chat model's
    async client does neither, so both are overridden.
    """

    bound_tools: list[dict[str, Any]] = Field(default_factory=list)
    """Tools from the last ``bind_tools``, in OpenAI function shape."""

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> _ToolCallingFakeModel:
        """Record the tools as a chat model would send them and return self."""
        self.bound_tools = [convert_to_openai_tool(t)["function"] for t in tools]
        return self

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return self._generate(messages, stop=stop, **kwargs)


def _message(turn: Turn, index: int) -> AIMessage:
    if isinstance(turn, str):
        return AIMessage(content=turn)
    calls = [
        {"name": call.name, "args": call.args, "id": f"call_{index}_{i}", "type": "tool_call"}
        for i, call in enumerate(turn)
    ]
    return AIMessage(content="", tool_calls=calls)


class _LangGraphAgent:
    def __init__(self, tools: Sequence[Callable[..., Any]], script: Script) -> None:
        responses: list[BaseMessage] = [_message(turn, i) for i, turn in enumerate(script)]
        self._model = _ToolCallingFakeModel(responses=responses)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # create_react_agent's deprecation notice
            self._graph = create_react_agent(self._model, [tool(fn) for fn in tools])
        # Two graph steps (model node, tools node) per turn; the default
        # recursion_limit of 25 would stop long scripts.
        self._config: RunnableConfig = {"recursion_limit": 2 * len(script) + 5}

    async def run(self) -> str:
        self._model.i = 0
        state = await self._graph.ainvoke({"messages": [("user", "go")]}, self._config)
        return str(state["messages"][-1].content)

    def menu_bytes(self) -> int | None:
        return menu_bytes(self._model.bound_tools)

    def reported_prompt_bytes(self) -> int | None:
        return None  # this framework reports no prompt size


def make_agent(tools: Sequence[Callable[..., Any]], script: Script) -> _LangGraphAgent:
    """Return a ``create_react_agent`` graph over ``tools`` with a scripted fake model."""
    return _LangGraphAgent(tools, script)
