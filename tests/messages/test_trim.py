"""``trim_history``: the newest part that fits, never a tool result without its call."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openprogram.exceptions import UserError
from openprogram.messages import (
    IMAGE_CHARS,
    AssistantMessage,
    ImageContent,
    Message,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    trim_history,
)


def conversation(seed: int) -> list[Message]:
    """Exchanges of a user turn, rounds of tool calls with their results, and an answer;
    now and then a user message (steering) right after a round of results."""
    rng = random.Random(seed)
    out: list[Message] = []
    for turn in range(rng.randrange(1, 6)):
        out.append(UserMessage("u" * rng.randrange(1, 40)))
        for round_ in range(rng.randrange(3)):
            ids = [f"c{turn}.{round_}.{i}" for i in range(rng.randrange(1, 3))]
            out.append(AssistantMessage(tuple(ToolCall(i, "f", {"n": 1}) for i in ids)))
            out.extend(ToolResultMessage(i, "f", "r" * rng.randrange(60)) for i in ids)
            if rng.random() < 0.3:
                out.append(UserMessage("steer"))
        out.append(AssistantMessage((TextContent("a" * rng.randrange(1, 40)),)))
    return out


def size(messages: tuple[Message, ...]) -> int:
    return sum(
        len(m.content)
        if isinstance(m, ToolResultMessage)
        else len(m.text) + sum(len(c.name) + len('{"n": 1}') for c in getattr(m, "tool_calls", []))
        for m in messages
    )


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32), st.integers(1, 400), st.integers(1, 30))
def test_a_trimmed_history_is_a_suffix_that_fits_and_keeps_calls_with_results(
    seed: int, max_chars: int, max_messages: int
) -> None:
    messages = conversation(seed)
    kept = trim_history(messages, max_chars=max_chars, max_messages=max_messages)
    assert kept == tuple(messages[len(messages) - len(kept) :])
    assert len(kept) <= max_messages
    assert size(kept) <= max_chars
    if kept:
        assert isinstance(kept[0], UserMessage)
    made = {c.id for m in kept if isinstance(m, AssistantMessage) for c in m.tool_calls}
    assert all(m.call_id in made for m in kept if isinstance(m, ToolResultMessage))
    # the newest that fits: no longer suffix opening with a user turn would
    cut = len(messages) - len(kept)
    longer = [i for i in range(cut) if isinstance(messages[i], UserMessage)]
    if longer:
        bigger = tuple(messages[longer[-1] :])
        assert len(bigger) > max_messages or size(bigger) > max_chars


def test_the_cut_moves_back_to_the_user_turn_rather_than_split_a_call_from_its_result() -> None:
    messages = [
        UserMessage("What is the weather in Paris and Rome?"),
        AssistantMessage((ToolCall("1", "weather", {"city": "Paris"}),)),
        ToolResultMessage("1", "weather", "sunny"),
        AssistantMessage((ToolCall("2", "weather", {"city": "Rome"}),)),
        ToolResultMessage("2", "weather", "rain"),
        AssistantMessage((TextContent("Paris is sunny, Rome rainy."),)),
        UserMessage("Thanks!"),
        AssistantMessage((TextContent("You're welcome."),)),
    ]
    # the last 4 messages would start at the Rome call's reply: the cut goes to the user turn
    assert trim_history(messages, max_messages=4) == tuple(messages[6:])
    assert trim_history(messages, max_messages=8) == tuple(messages)
    assert trim_history(messages, max_messages=1) == ()  # not even the last exchange fits


def test_an_image_counts_as_image_chars() -> None:
    picture = UserMessage((TextContent("Look"), ImageContent(data="aGk=", mime_type="image/png")))
    messages = [picture, AssistantMessage((TextContent("A cat."),))]
    assert trim_history(messages, max_chars=IMAGE_CHARS + 10) == tuple(messages)
    assert trim_history(messages, max_chars=IMAGE_CHARS) == ()


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "10"])
def test_a_limit_must_be_a_positive_int(bad: object) -> None:
    with pytest.raises(UserError, match="use an int >= 1"):
        trim_history([], max_chars=bad)  # type: ignore[arg-type]
