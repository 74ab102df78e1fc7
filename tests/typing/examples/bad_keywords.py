"""A typo'd keyword or a value of the wrong type is one short error that names it.

Each marked line must get exactly that error, no list of overloads: a line
whose comment ``names`` a keyword gets one error quoting it, under 400
characters with its notes (``test_a_bad_keyword_is_one_short_error_naming_it``).
"""

from __future__ import annotations

from typing import reveal_type

from pydantic import BaseModel

from openprogram import Conversation, Runtime

runtime = Runtime("openai:gpt-4o-mini")
chat = runtime.conversation("c1")


class Ticket(BaseModel):
    title: str


def refund(amount_cents: int) -> str:
    """Refund the customer."""
    return f"refunded {amount_cents}"


runtime.exec("Hi", tool=[])  # E: arg-type  # names "tool"
runtime.exec("Hi", max_iterations="3")  # E: arg-type  # names "max_iterations"
runtime.exec("Hi", tools=[refund], max_iteration=3)  # E: arg-type  # names "max_iteration"
runtime.exec("Hi", timeout_s="10")  # E: arg-type  # names "timeout_s"
runtime.exec("Hi", tool_choice="any")  # E: arg-type  # names "tool_choice"
runtime.exec("Hi", response_format=Ticket, tool=[])  # E: arg-type  # names "tool"
runtime.exec("Hi", response_format=Ticket, max_iterations="3")  # E: arg-type  # names "max_iterations"  # fmt: skip
runtime.exec("Hi", response_format="Ticket")  # E: arg-type  # names "response_format"
runtime.exec("Hi", choices=[refund], tool=[])  # E: arg-type  # names "tool"
runtime.exec("Hi", choices=42)  # E: arg-type  # names "choices"
runtime.exec("Hi", choices=[refund], response_format=Ticket)  # E: arg-type  # names "response_format"  # fmt: skip
runtime.exec("Hi", response_format=None, choices=None, toolz=[])  # E: arg-type  # names "toolz"
chat.send("Hi", max_iteration=3)  # E: arg-type  # names "max_iteration"
chat.send("Hi", response_format=Ticket, seed="1")  # E: arg-type  # names "seed"
runtime.conversation("c2", tool=[])  # E: call-arg  # names "tool"
runtime.stream("Hi", tool=[])  # E: call-arg  # names "tool"

# A limit: with choices= of functions or values, a wrong-typed value gets a second error,
# about choices= not being classes (the first form mypy tries); a typo'd keyword does not.
runtime.exec("Hi", choices=[refund], budget=3)  # E: arg-type

# The answer of a call with a bad keyword is Any: no second error where it is used.
answer = runtime.exec("Hi", tool=[])  # E: arg-type  # names "tool"
reveal_type(answer)  # R: Any


async def async_uses(conversation: Conversation) -> None:
    await runtime.async_exec("Hi", tool=[])  # E: arg-type  # names "tool"
    await runtime.async_exec("Hi", max_iterations="3")  # E: arg-type  # names "max_iterations"
    await conversation.asend("Hi", tool=[])  # E: arg-type  # names "tool"
    await conversation.asend("Hi", response_format=Ticket, model=1)  # E: arg-type  # names "model"


# Correct calls still pass and keep their types.
reveal_type(runtime.exec("Hi", tools=[refund], max_iterations=3, timeout_s=10.0))  # R: str
reveal_type(runtime.exec("Hi", response_format=Ticket, toolset="none"))  # R: bad_keywords.Ticket
reveal_type(runtime.exec("Hi", choices=[refund], tools=[], max_iterations=2))  # R: str
reveal_type(chat.send("Hi", response_format=Ticket, seed=1))  # R: bad_keywords.Ticket
