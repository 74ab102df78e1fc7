"""``exec(history=...)``: a run continues from earlier messages."""

from __future__ import annotations

import asyncio

import pytest

from openprogram import Runtime, UserError, agentic_function, function
from openprogram.messages import AssistantMessage, ToolResultMessage, UserMessage
from openprogram.runtime import StreamFinal
from openprogram.testing import FunctionProvider, ScriptedProvider, call


@function(register_globally=False)
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: First number.
        b: Second number.
    """
    return a + b


def test_the_model_sees_the_history_then_the_new_content() -> None:
    model = ScriptedProvider([call("add", a=2, b=3), "It is 5.", "You asked about 2 + 3."])
    runtime = Runtime(model, system="Be brief.")
    runtime.exec("What is 2 + 3?", tools=[add])
    assert runtime.last_run is not None
    first = runtime.last_run.messages
    assert runtime.exec("What did I ask?", tools=[add], history=first) == "You asked about 2 + 3."
    sent = model.requests[-1]
    assert sent.messages == (*first, UserMessage("What did I ask?"))
    assert sent.system == "Be brief."  # the system prompt travels in the request, never in history
    assert not any(isinstance(m, UserMessage) and m.text == "Be brief." for m in sent.messages)
    # last_run.messages holds both: the history, the new content and the reply
    assert runtime.last_run.messages[:-1] == sent.messages
    assert runtime.last_run.text == "You asked about 2 + 3."


def test_new_tool_calls_never_reuse_an_id_from_the_history() -> None:
    # The scripted fake numbers calls call_1, call_2, ... afresh in every runtime.
    runtime = Runtime(ScriptedProvider([call("add", a=1, b=1), "2"]))
    runtime.exec("1 + 1?", tools=[add])
    assert runtime.last_run is not None
    history = runtime.last_run.messages
    again = Runtime(ScriptedProvider([call("add", a=2, b=2), "4"]))
    again.exec("2 + 2?", tools=[add], history=history)
    assert again.last_run is not None
    ids = [m.call_id for m in again.last_run.messages if isinstance(m, ToolResultMessage)]
    assert len(ids) == len(set(ids)) == 2


def test_async_exec_and_stream_take_history_too() -> None:
    history = (UserMessage("My name is Ann."), AssistantMessage(()))
    seen: list[int] = []

    def model(request: object) -> str:
        seen.append(len(request.messages))  # type: ignore[attr-defined]
        return "Ann"

    runtime = Runtime(FunctionProvider(model))

    async def main() -> list[object]:
        await runtime.async_exec("Who am I?", tools=[], history=history)
        return [e async for e in runtime.stream("Who am I?", tools=[], history=history)]

    events = asyncio.run(main())
    assert seen == [3, 3]
    final = events[-1]
    assert isinstance(final, StreamFinal)
    assert final.result.messages[:2] == history


def test_a_nested_exec_does_not_see_the_outer_history() -> None:
    @agentic_function(register_globally=False)
    def helper(question: str, runtime: Runtime) -> str:
        """Answer a sub-question.

        Args:
            question: The sub-question.
        """
        return runtime.exec(question, tools=[])

    def model(request: object) -> object:
        messages = request.messages  # type: ignore[attr-defined]
        if messages[-1] == UserMessage("inner?"):
            assert len(messages) == 1  # the inner exec starts fresh
            return "inner answer"
        if isinstance(messages[-1], ToolResultMessage):
            return "outer answer"
        return call("helper", question="inner?")

    history = (UserMessage("earlier"), AssistantMessage(()))
    runtime = Runtime(FunctionProvider(model))
    assert runtime.exec("outer?", tools=[helper], history=history) == "outer answer"


@pytest.mark.parametrize(
    ("history", "error"),
    [
        ("hello", r"exec\(history='hello'\) must be a sequence of messages"),
        ({"role": "user"}, "must be a sequence of messages"),
        ([UserMessage("hi"), "hello"], r"history\[1\] \('hello'\) is not a message"),
        (
            [UserMessage("hi"), ToolResultMessage("call_7", "add", "5")],
            r"history\[1\] is the result of call 'call_7', which no earlier reply",
        ),
    ],
)
def test_a_bad_history_is_a_user_error_before_any_request(history: object, error: str) -> None:
    model = ScriptedProvider(["never"])
    with pytest.raises(UserError, match=error):
        Runtime(model).exec("hi", history=history)  # type: ignore[arg-type]
    assert model.requests == []
