"""``Conversation.stream``: a send whose stream events come as the reply is written."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from openprogram import Runtime, UserError, agentic_function
from openprogram.messages import ToolResultMessage, UserMessage
from openprogram.providers.base import ProviderRequest
from openprogram.runtime import Conversation, StreamFinal, StreamTextDelta, StreamToolCall
from openprogram.stores import SQLiteStore
from openprogram.testing import FunctionProvider, call


def echo(request: ProviderRequest) -> str:
    last = request.messages[-1]
    assert isinstance(last, UserMessage)
    return f"re: {last.text}"


async def until_final(chat: Conversation, content: str) -> tuple[str, Any]:
    """The streamed text and the first final's output, stopping at that final."""
    text = ""
    async for event in chat.stream(content):
        if isinstance(event, StreamTextDelta) and event.depth == 1:
            text += event.text
        if isinstance(event, StreamFinal):
            return text, event.output
    raise AssertionError("the stream ended without a final")


def test_a_streamed_send_yields_its_reply_and_is_saved_before_its_final(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "chats.sqlite") as store:
        chat = Runtime(FunctionProvider(echo), store=store).conversation("c1")
        assert asyncio.run(until_final(chat, "Hello")) == ("re: Hello", "re: Hello")
        # stopping at the final cancelled nothing: the exchange is stored
        assert [m.text for m in chat.messages] == ["Hello", "re: Hello"]
        assert asyncio.run(until_final(chat, "Again")) == ("re: Again", "re: Again")
        assert len(chat.messages) == 4


def test_the_first_final_of_a_streamed_send_is_the_sends_not_a_sub_agents() -> None:
    @agentic_function(register_globally=False)
    async def helper(topic: str, runtime: Runtime) -> str:
        """A sub-agent.

        Args:
            topic: What to look into.
        """
        return await runtime.async_exec(f"Look into {topic}.", tools=[])

    def model(request: ProviderRequest) -> Any:
        first = request.messages[0]
        if first.text.startswith("Look into"):
            return "sub-agent's answer"
        last = request.messages[-1]
        if isinstance(last, ToolResultMessage):
            return f"Told: {last.content}"
        return call("helper", topic="tides")

    chat = Runtime(FunctionProvider(model)).conversation(tools=[helper])
    text, output = asyncio.run(until_final(chat, "Research tides."))
    assert output == text == "Told: sub-agent's answer"
    assert [type(m).__name__ for m in chat.messages] == [
        "UserMessage",
        "AssistantMessage",
        "ToolResultMessage",
        "AssistantMessage",
    ]


def test_closing_a_streamed_send_early_cancels_it_and_appends_nothing() -> None:
    async def wait_forever() -> str:
        """Never finishes on its own."""
        await asyncio.sleep(30)
        return "late"

    def model(request: ProviderRequest) -> Any:
        last = request.messages[-1]
        return call("wait_forever") if isinstance(last, UserMessage) else "never"

    chat = Runtime(FunctionProvider(model)).conversation(tools=[wait_forever])

    async def main() -> None:
        stream = chat.stream("Go.")
        async for event in stream:
            if isinstance(event, StreamToolCall):
                break
        await stream.aclose()

    asyncio.run(main())
    assert chat.messages == ()
    assert chat.send("Go.", tools=[]) == "never"  # the turn was freed


def test_stream_takes_sends_options_and_refuses_history() -> None:
    chat = Runtime(FunctionProvider(echo)).conversation()
    with pytest.raises(UserError, match="supplies its own history"):
        chat.stream("x", history=())
    with pytest.raises(TypeError):
        chat.stream("x", max_iteration=3)  # type: ignore[call-arg]
