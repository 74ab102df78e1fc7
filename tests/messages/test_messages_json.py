"""``dump_messages``/``load_messages``: a lossless, versioned round trip, and clear errors."""

from __future__ import annotations

import doctest
import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import openprogram.messages._json
import openprogram.messages._trim
from openprogram.exceptions import UserError
from openprogram.messages import (
    AssistantMessage,
    ImageContent,
    Message,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
    dump_messages,
    load_messages,
)

from ._strategies import everything, message_lists, random_messages


@settings(max_examples=1000, deadline=None)
@given(st.integers(0, 2**64))
def test_load_of_dump_gives_the_messages_back(seed: int) -> None:
    _round_trips(random_messages(seed))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(message_lists)
def test_load_of_dump_gives_the_messages_back_shrinking(messages: list[Message]) -> None:
    # Fewer examples than the seeded test above, but a failure shrinks to a small case.
    _round_trips(messages)


def _round_trips(messages: list[Message]) -> None:
    text = dump_messages(messages)
    loaded = load_messages(text)
    assert loaded == tuple(messages)
    assert everything(loaded) == everything(tuple(messages))  # provider_meta and wire too
    assert json.loads(text)["version"] == 1


SAMPLE: tuple[Message, ...] = (
    UserMessage("What is 2+3? See the chart."),
    AssistantMessage(
        (
            ThinkingContent("Add them.", provider_meta={"signature": "sig-1"}),
            TextContent("Adding."),
            ToolCall("call_1", "add", {"a": 2, "b": 3.5}, provider_meta={"id": "fc_1"}),
        ),
        stop_reason="tool_calls",
        usage=Usage(input_tokens=12, output_tokens=7, cached_tokens=4),
        model="claude-x",
        wire="anthropic",
    ),
    ToolResultMessage("call_1", "add", "5.5"),
    UserMessage((TextContent("And this?"), ImageContent(data="aGk=", mime_type="image/png"))),
    AssistantMessage((), stop_reason="error", error="overloaded"),
    ToolResultMessage("call_2", "div", "ZeroDivisionError", is_error=True),
)


def test_the_text_is_one_versioned_object_with_images_as_data() -> None:
    document = json.loads(dump_messages(SAMPLE))
    assert list(document) == ["version", "messages"]
    assert document["messages"][3]["content"][1] == {
        "type": "image",
        "data": "aGk=",
        "mime_type": "image/png",
    }
    assert document["messages"][1]["usage"] == {
        "input_tokens": 12,
        "output_tokens": 7,
        "cached_tokens": 4,
    }
    assert everything(load_messages(dump_messages(SAMPLE, indent=2))) == everything(SAMPLE)


def _broken(edit: str) -> str:
    document = json.loads(dump_messages(SAMPLE))
    exec(edit, {"d": document})
    return json.dumps(document)


@pytest.mark.parametrize(
    ("edit", "error"),
    [
        (
            "d['messages'][1]['content'][1]['text'] = 3",
            "messages[1].content[1].text: expected a string",
        ),
        (
            "d['messages'][3]['content'][0]['type'] = 'video'",
            "messages[3].content[0]: expected a text or image block, got type 'video'",
        ),
        (
            "d['messages'][3]['content'][1]['data'] = 'not base64!'",
            "messages[3].content[1].data: not base64",
        ),
        (
            "d['messages'][1]['usage']['output_tokens'] = -1",
            "messages[1].usage.output_tokens: expected an integer >= 0",
        ),
        (
            "d['messages'][1]['stop_reason'] = 'done'",
            "messages[1].stop_reason: 'done' is not a stop reason",
        ),
        ("d['messages'][2]['is_eror'] = True", "messages[2].is_eror: unknown field"),
        ("d['messages'][2]['is_error'] = 'yes'", "messages[2].is_error: expected true or false"),
        (
            "d['messages'][0]['role'] = 'system'",
            "messages[0].role: expected 'user', 'assistant' or 'tool'",
        ),
        (
            "d['messages'][1]['content'][2]['arguments'] = [2, 3]",
            "messages[1].content[2].arguments: expected an object",
        ),
        (
            "d['messages'][1]['content'][0]['provider_meta'] = 'sig'",
            "messages[1].content[0].provider_meta: expected an object",
        ),
        ("del d['messages'][2]['call_id']", "messages[2].call_id: expected a string, got null"),
        ("d['messages'] = {}", "messages: expected an array of messages"),
        ("d['version'] = 2", "version: 2 is not a messages format this openprogram reads"),
        ("d['extra'] = 1", "extra: unknown field"),
    ],
)
def test_bad_input_names_the_path_of_the_bad_field(edit: str, error: str) -> None:
    with pytest.raises(UserError) as caught:
        load_messages(_broken(edit))
    assert str(caught.value).startswith(error), str(caught.value)


def test_text_that_is_not_json_or_not_an_object_is_a_user_error() -> None:
    with pytest.raises(UserError, match="not JSON"):
        load_messages("[{")
    with pytest.raises(UserError, match=r'expected an object \{"version": 1'):
        load_messages("[]")
    assert isinstance(UserError("x"), ValueError)


def test_what_json_cannot_carry_is_refused_when_dumping_with_its_path() -> None:
    bad_float = AssistantMessage((ToolCall("c", "f", {"x": [1, math.inf]}),))
    with pytest.raises(UserError, match=r"messages\[1\]\.content\[0\]\.arguments\.x\[1\]: inf"):
        dump_messages([UserMessage("hi"), bad_float])
    bad_key = AssistantMessage((TextContent("t", provider_meta={1: "one"}),))
    with pytest.raises(UserError, match=r"messages\[0\]\.content\[0\]\.provider_meta: the key 1"):
        dump_messages([bad_key])
    with pytest.raises(UserError, match=r"messages\[0\]: 'hello' is not a message"):
        dump_messages(["hello"])  # type: ignore[list-item]


@pytest.mark.parametrize("module", [openprogram.messages._json, openprogram.messages._trim])
def test_docstring_examples_run(module: object) -> None:
    failed, attempted = doctest.testmod(module)  # type: ignore[arg-type]
    assert attempted > 0
    assert failed == 0
