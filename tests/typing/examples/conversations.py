"""Conversation.send / asend: the answer's type follows response_format, as exec's does."""

from __future__ import annotations

from typing import Any, reveal_type

from pydantic import BaseModel

from openprogram import Conversation, Runtime
from openprogram.messages import Message, dump_messages, load_messages
from openprogram.providers.base import ProviderRequest
from openprogram.stores import MemoryStore, SQLiteStore, Store
from openprogram.testing import FunctionProvider

runtime = Runtime("openai:gpt-4o-mini", store=SQLiteStore("/tmp/chats.sqlite"))
chat = runtime.conversation("c1", max_iterations=5)


class Ticket(BaseModel):
    title: str


SCHEMA: dict[str, Any] = {"type": "object"}

reveal_type(chat)  # R: openprogram.runtime._conversation.Conversation
reveal_type(chat.send("Hello"))  # R: str
reveal_type(chat.send("File it", response_format=Ticket))  # R: conversations.Ticket
reveal_type(chat.send("Count", response_format=SCHEMA))  # R: Any
reveal_type(chat.messages)  # R: tuple[openprogram.messages._types.UserMessage | openprogram.messages._types.AssistantMessage | openprogram.messages._types.ToolResultMessage, ...]  # fmt: skip
reveal_type(chat.conversation_id)  # R: str
reveal_type(load_messages(dump_messages(chat.messages)))  # R: tuple[openprogram.messages._types.UserMessage | openprogram.messages._types.AssistantMessage | openprogram.messages._types.ToolResultMessage, ...]  # fmt: skip
chat.send("Hello", max_iteration=3)  # E: arg-type
wrong: int = chat.send("Hello")  # E: assignment
store: Store = MemoryStore()
history: tuple[Message, ...] = chat.messages
reveal_type(runtime.exec("Go on", history=history))  # R: str
# Every message has .text, a tool result's being its content.
reveal_type(history[-1].text)  # R: str
texts: list[str] = [m.text for m in chat.messages]


def echo_model(request: ProviderRequest) -> str:
    """A fake model answering with the last message's text, whatever kind of message it is."""
    return request.messages[-1].text


reveal_type(Runtime(FunctionProvider(echo_model)).exec("Echo"))  # R: str


async def async_uses(conversation: Conversation) -> str:
    ticket = await conversation.asend("File it", response_format=Ticket)
    reveal_type(ticket)  # R: conversations.Ticket
    return await conversation.asend("Thanks")
