"""The fake model and tools the chat command's tests start it with (``--model``, ``--tools``)."""

from __future__ import annotations

import asyncio
from typing import Any

from openprogram import function
from openprogram.messages import ToolResultMessage, UserMessage
from openprogram.providers import ProviderRequest
from openprogram.testing import FunctionProvider, call


@function(register_globally=False)
def get_weather(city: str) -> str:
    """Current weather for a city.

    Args:
        city: City name, e.g. "Paris".
    """
    return f"{city}: sunny, 21 degrees"


async def _reply(request: ProviderRequest) -> Any:
    last = request.messages[-1]
    if isinstance(last, ToolResultMessage):
        return f"Looked it up: {last.content}."
    assert isinstance(last, UserMessage)
    if "weather" in last.text:
        return call("get_weather", city="Paris")
    if "slowly" in last.text:
        print("[model at work]", flush=True)  # the test's cue: the send has started
        await asyncio.sleep(120)  # the test interrupts it with Ctrl-C
    if "before" in last.text:
        earlier = [m.text for m in request.messages[:-1] if isinstance(m, UserMessage)]
        return f"Before, you said: {' / '.join(earlier) or 'nothing'}."
    return f"You said: {last.text}"


def chat_model() -> FunctionProvider:
    return FunctionProvider(_reply, model="chat-fake")
