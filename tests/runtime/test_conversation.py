"""``runtime.conversation``: sends that continue, take turns, and keep only their own turns."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from openprogram import Conversation, Runtime, UserError, agentic_function, function
from openprogram.messages import (
    AssistantMessage,
    Message,
    ToolResultMessage,
    UserMessage,
    trim_history,
)
from openprogram.providers.base import ProviderRequest
from openprogram.stores import MemoryStore, SQLiteStore, Store
from openprogram.testing import FunctionProvider, ScriptedProvider, call


def echo(request: ProviderRequest) -> str:
    """A model that answers the last user message with ``re: <it>``."""
    last = request.messages[-1]
    assert isinstance(last, UserMessage)
    return f"re: {last.text}"


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    if request.param == "memory":
        yield MemoryStore()
    else:
        with SQLiteStore(tmp_path / "chats.sqlite") as sqlite:
            yield sqlite


def texts(messages: tuple[Message, ...]) -> list[str]:
    return [m.content if isinstance(m, ToolResultMessage) else m.text for m in messages]


def test_each_send_continues_from_the_conversation_so_far(store: Store) -> None:
    model = FunctionProvider(echo)
    chat = Runtime(model, store=store, system="Be brief.").conversation("c1")
    assert chat.conversation_id == "c1"
    assert chat.send("Hi, I am Ann.") == "re: Hi, I am Ann."
    assert chat.send("Who am I?") == "re: Who am I?"
    assert texts(model.requests[1].messages) == ["Hi, I am Ann.", "re: Hi, I am Ann.", "Who am I?"]
    assert model.requests[1].system == "Be brief."
    assert texts(chat.messages) == [
        "Hi, I am Ann.",
        "re: Hi, I am Ann.",
        "Who am I?",
        "re: Who am I?",
    ]
    # another Conversation object, of another runtime, on the same store continues it
    later = Runtime(FunctionProvider(echo), store=store).conversation("c1")
    later.send("Still there?")
    assert len(later.messages) == len(chat.messages) == 6


def test_without_a_store_a_conversation_lives_in_its_runtime() -> None:
    runtime = Runtime(FunctionProvider(echo))
    chat = runtime.conversation()
    assert chat.conversation_id.startswith("conv_")
    chat.send("one")
    assert runtime.store is None
    assert len(runtime.conversation(chat.conversation_id).messages) == 2
    assert Runtime(FunctionProvider(echo)).conversation(chat.conversation_id).messages == ()
    assert runtime.conversation().conversation_id != chat.conversation_id


def test_sends_on_one_conversation_from_8_threads_take_turns(store: Store) -> None:
    runtime = Runtime(FunctionProvider(echo), store=store)
    chats = [runtime.conversation("busy"), runtime.conversation("busy")]  # two objects, one id
    failures: list[BaseException] = []

    def client(number: int) -> None:
        try:
            for turn in range(25):
                reply = chats[number % 2].send(f"{number}:{turn}")
                assert reply == f"re: {number}:{turn}"
        except BaseException as exc:  # noqa: BLE001 - a thread cannot raise into the test: kept, asserted below
            failures.append(exc)

    threads = [threading.Thread(target=client, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    stored = runtime.conversation("busy").messages
    assert len(stored) == 400  # 200 exchanges, none lost
    for user, reply in zip(stored[::2], stored[1::2], strict=True):
        assert isinstance(user, UserMessage)
        assert isinstance(reply, AssistantMessage)
        assert reply.text == f"re: {user.text}"  # each reply right after its own message
    assert sorted(m.text for m in stored[::2]) == sorted(
        f"{n}:{t}" for n in range(8) for t in range(25)
    )


def test_each_send_sees_exactly_what_was_stored_when_it_started(store: Store) -> None:
    seen: list[int] = []

    async def slow_echo(request: ProviderRequest) -> str:
        seen.append(len(request.messages))
        await asyncio.sleep(0.01)  # let the other sends pile up behind this one
        return echo(request)

    chat = Runtime(FunctionProvider(slow_echo), store=store).conversation("c")

    async def main() -> None:
        await asyncio.gather(*(chat.asend(f"m{i}") for i in range(6)))

    asyncio.run(main())
    assert seen == [1, 3, 5, 7, 9, 11]  # never two sends on the same history


def test_nested_execs_never_leak_into_the_conversation(store: Store) -> None:
    @agentic_function(register_globally=False)
    def research(topic: str, runtime: Runtime) -> str:
        """Research a topic.

        Args:
            topic: What to look into.
        """
        return runtime.exec(f"Look into {topic}.", tools=[])

    def model(request: ProviderRequest) -> Any:
        last = request.messages[-1]
        if isinstance(last, UserMessage) and last.text.startswith("Look into"):
            return "inner notes"
        if isinstance(last, ToolResultMessage):
            return "Here is my summary."
        return call("research", topic="tides")

    chat = Runtime(FunctionProvider(model), store=store).conversation()
    assert chat.send("Tell me about tides.", tools=[research]) == "Here is my summary."
    stored = chat.messages
    assert [type(m).__name__ for m in stored] == [
        "UserMessage",
        "AssistantMessage",
        "ToolResultMessage",
        "AssistantMessage",
    ]
    assert "Look into tides." not in texts(stored)
    assert "inner notes" in texts(stored)  # as the tool's result, the outer exec's own turn


def test_a_send_that_fails_appends_nothing_and_frees_its_turn(store: Store) -> None:
    model = ScriptedProvider(["first"])  # a second request finds the script exhausted
    chat = Runtime(model, store=store).conversation("c")
    chat.send("one")
    with pytest.raises(AssertionError):
        chat.send("two")
    assert texts(chat.messages) == ["one", "first"]
    assert (
        Runtime(FunctionProvider(echo), store=store).conversation("c").send("three") == "re: three"
    )


def test_a_cancelled_send_appends_nothing_and_frees_its_turn(store: Store) -> None:
    started = asyncio.Event()

    async def stuck(request: ProviderRequest) -> str:
        started.set()
        await asyncio.sleep(60)
        return "never"

    chat = Runtime(FunctionProvider(stuck), store=store).conversation("c")

    async def main() -> None:
        send = asyncio.ensure_future(chat.asend("hello"))
        await started.wait()
        send.cancel()
        with pytest.raises(asyncio.CancelledError):
            await send
        other = Runtime(FunctionProvider(echo), store=store).conversation("c")
        assert await asyncio.wait_for(other.asend("again"), 30) == "re: again"

    asyncio.run(main())
    assert texts(chat.messages) == ["again", "re: again"]


def test_the_default_trim_keeps_the_newest_exchanges_and_calls_with_results() -> None:
    @function(register_globally=False)
    def lookup(key: str) -> str:
        """Look a key up.

        Args:
            key: The key.
        """
        return "v" * 30_000

    def model(request: ProviderRequest) -> Any:
        if isinstance(request.messages[-1], UserMessage):
            return call("lookup", key="k")
        return "done"

    provider = FunctionProvider(model)
    chat = Runtime(provider).conversation(tools=[lookup])
    for number in range(5):
        chat.send(f"question {number}")
    sent = provider.requests[-2].messages  # the last send's first request
    assert sum(len(m.content) for m in sent if isinstance(m, ToolResultMessage)) < 100_000
    # of the four earlier exchanges (30,000 characters each) the newest three fit
    assert [m.text for m in sent if isinstance(m, UserMessage)] == [
        "question 1",
        "question 2",
        "question 3",
        "question 4",
    ]
    calls = {c.id for m in sent if isinstance(m, AssistantMessage) for c in m.tool_calls}
    assert {m.call_id for m in sent if isinstance(m, ToolResultMessage)} == calls
    assert len(chat.messages) == 20  # the store keeps everything


def test_a_trim_hook_makes_the_history_and_none_sends_everything() -> None:
    given: list[int] = []

    def last_exchange(messages: tuple[Message, ...]) -> tuple[Message, ...]:
        given.append(len(messages))
        return trim_history(messages, max_messages=2)

    provider = FunctionProvider(echo)
    chat = Runtime(provider).conversation(trim=last_exchange)
    for text in ("a", "b", "c"):
        chat.send(text)
    assert given == [0, 2, 4]
    assert texts(provider.requests[-1].messages) == ["b", "re: b", "c"]
    everything = Runtime(provider).conversation(trim=None)
    for text in ("a", "b", "c"):
        everything.send(text)
    assert len(provider.requests[-1].messages) == 5


def test_send_is_typed_like_exec_and_takes_the_conversation_defaults() -> None:
    class City(BaseModel):
        name: str

    model = ScriptedProvider(['{"name": "Paris"}', "plain"])
    chat: Conversation = Runtime(model).conversation(max_iterations=3, temperature=0.5)
    city = chat.send("Capital of France?", response_format=City)
    assert city == City(name="Paris")
    assert chat.send("Thanks", temperature=0.1) == "plain"
    assert [r.temperature for r in model.requests] == [0.5, 0.1]


@pytest.mark.parametrize(
    ("make", "error"),
    [
        (lambda rt: rt.conversation(""), r"the id must be a non-empty string"),
        (lambda rt: rt.conversation(7), r"the id must be a non-empty string"),
        (lambda rt: rt.conversation(trim=5), r"trim=5\): give a callable"),
        (lambda rt: rt.conversation(history=[]), r"supplies its own history"),
        (lambda rt: rt.conversation().send("hi", history=[]), r"send\(history=...\)"),
        (lambda rt: rt.conversation(max_iterations="x"), r"max_iterations"),
        (lambda rt: rt.conversation(trim=lambda m: 3).send("hi"), r"trim hook returned int"),
    ],
)
def test_bad_arguments_are_user_errors(make: Any, error: str) -> None:
    with pytest.raises(UserError, match=error):
        make(Runtime(FunctionProvider(echo)))


def test_unknown_options_and_non_stores_are_type_errors() -> None:
    with pytest.raises(TypeError, match="max_iteration"):
        Runtime(FunctionProvider(echo)).conversation(max_iteration=3)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"Runtime\(store='chats.sqlite'\) is not a store"):
        Runtime(FunctionProvider(echo), store="chats.sqlite")  # type: ignore[arg-type]


def test_messages_and_amessages_read_the_store() -> None:
    store = MemoryStore()
    chat = Runtime(FunctionProvider(echo), store=store).conversation("c")
    other = Runtime(FunctionProvider(echo), store=store).conversation("c")
    other.send("hello")
    assert texts(chat.messages) == ["hello", "re: hello"]
    assert asyncio.run(chat.amessages()) == chat.messages
    assert "c" in repr(chat)


def test_a_send_from_a_tool_of_a_send_on_the_same_conversation_is_refused() -> None:
    @function(register_globally=False)
    def note(text: str) -> str:
        """Note something in the conversation.

        Args:
            text: What to note.
        """
        return chat.send(text)  # would wait for the send that runs this tool

    def model(request: ProviderRequest) -> Any:
        if isinstance(request.messages[-1], ToolResultMessage):
            return f"tool said: {request.messages[-1].content}"
        return call("note", text="x")

    chat = Runtime(FunctionProvider(model)).conversation("c", tools=[note])
    reply = chat.send("Note x.")
    assert "would wait for itself" in reply  # the tool's error result, not a hang
    assert len(chat.messages) == 4
