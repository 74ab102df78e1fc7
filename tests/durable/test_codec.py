"""What a journaled step holds reads back as what was journaled, whatever the text holds."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openprogram.durable import Fingerprint, read_reply, read_result, reply_step, result_step
from openprogram.durable._batch import Reply, Result, StepBatch, frozen
from openprogram.exceptions import UserError
from openprogram.messages import (
    AssistantMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
)
from openprogram.stores import Step
from openprogram.stores._run_rows import latest_steps, steps_row
from tests.messages._strategies import everything, random_messages, replies

ODD_TEXTS = [
    "",
    "plain",
    'quote " and \\ slash',
    "tab\tnew\nline\x00\x1f",
    "é✓ 中文 🙂",
    "\ud800 lone",
]
"""Strings every encoder must carry: escapes, controls, non-ASCII, a lone surrogate."""

_PRINT = Fingerprint("f" * 56, {"model": None, "tools": {}}, "h" * 24, ("@1", "0a1b"))


def _round_trip(reply: AssistantMessage) -> None:
    for head in (False, True):
        step = reply_step("3/1", _PRINT, reply, head)
        read, data = read_reply(step)
        assert read == reply
        assert everything(read) == everything(reply)  # provider_meta, wire, 1 vs 1.0 too
        assert data["new"] == ["@1", "0a1b"]
        assert data.get("head") == (_PRINT.head if head else None)
        if frozen(reply):  # queued as it is: its batch's row holds the same step
            _same_batch([Reply(("3/1", _PRINT, reply, head))])


def _same_batch(items: list[Step | Reply | Result]) -> None:
    """A batch's row, written at once, holds what its steps made one by one hold."""
    steps = list(StepBatch(items))
    assert json.loads(StepBatch(items).row()) == json.loads(steps_row(steps))
    assert latest_steps([StepBatch(items).row()]) == latest_steps([steps_row(steps)])
    expected = [[s.key, s.kind, s.fingerprint, json.loads(s.data)] for s in steps]
    assert json.loads(StepBatch(items).row()) == expected


@settings(max_examples=500, deadline=None)
@given(st.integers(0, 2**64))
def test_a_reply_step_reads_back_as_the_reply(seed: int) -> None:
    for message in random_messages(seed):
        if isinstance(message, AssistantMessage):
            _round_trip(message)


@settings(max_examples=200, deadline=None)
@given(replies)
def test_a_reply_step_reads_back_as_the_reply_shrinking(reply: AssistantMessage) -> None:
    _round_trip(reply)


@pytest.mark.parametrize("text", ODD_TEXTS)
def test_odd_strings_in_every_field_of_a_reply_read_back(text: str) -> None:
    reply = AssistantMessage(
        (
            TextContent(text),
            ToolCall(text, text, {text: [text, 1.5, None, True]}, arguments_error=text),
        ),
        stop_reason="error",
        usage=Usage(1, 0, 3),
        error=text,
        model=text,
        wire=text,
    )
    read, _ = read_reply(reply_step("1", _PRINT, reply, False))
    assert everything(read) == everything(reply)
    flat = AssistantMessage((TextContent(text), ToolCall(text, text, {text: text, "n": 1.5})))
    _same_batch(
        [Reply(("1", _PRINT, flat, True)), Result(("1.0", text, "{}", _result(text), text))]
    )


def _result(text: str) -> ToolResultMessage:
    return ToolResultMessage("call_1", "lookup", text)


@pytest.mark.parametrize("text", ODD_TEXTS)
@pytest.mark.parametrize("failure", [None, "tool_error", "skipped:é ✓"])
def test_a_result_step_reads_back_as_the_result(text: str, failure: str | None) -> None:
    call = ToolCall("call_1", "lookup", {})
    message = ToolResultMessage("call_1", "lookup", text, is_error=failure is not None)
    read, read_failure = read_result(result_step("1.0", "ab", message, failure), call)
    assert read == message
    assert read_failure == failure


def test_a_batch_mixing_queued_and_encoded_steps_writes_them_in_order() -> None:
    plain = AssistantMessage((ToolCall("c1", "f", {"a": 1, "b": "é", "c": 1.5, "d": None}),))
    nested = AssistantMessage((ToolCall("c2", "f", {"a": [1, {"b": 2}]}),))
    assert frozen(plain)
    assert not frozen(nested)
    result = ToolResultMessage("c1", "f", "done \ud800", is_error=False)
    items: list[Step | Reply | Result] = [
        Reply(("1", _PRINT, plain, True)),
        Result(("1.0", "f", '{"a":1}', result, None)),
        reply_step("2", _PRINT, nested, False),
        Result(("2.0", "f", "{}", result, "tool_error")),
    ]
    _same_batch(items)
    _same_batch(items[:2])
    read = [read_reply(s)[0] if s.kind == "reply" else s.data for s in StepBatch(items)]
    assert read[0] == plain
    assert read[2] == nested


@pytest.mark.parametrize(
    "arguments", [{"x": float("inf")}, {"x": float("nan")}, {1: "a"}, {"x": (1, 2)}]
)
def test_a_reply_whose_arguments_could_change_or_fail_is_not_queued_as_it_is(
    arguments: dict[object, object],
) -> None:
    assert not frozen(AssistantMessage((ToolCall("c", "f", arguments),)))  # type: ignore[arg-type]


def test_a_reply_with_provider_data_is_encoded_when_it_is_queued() -> None:
    signed = TextContent("x", provider_meta={"signature": b"not json"})
    assert not frozen(AssistantMessage((signed,)))
    with pytest.raises(UserError, match="provider_meta"):  # at the turn, not at the write
        reply_step("1", _PRINT, AssistantMessage((signed,)), False)


def test_arguments_no_json_can_carry_are_refused_with_their_path() -> None:
    reply = AssistantMessage((TextContent("x"), ToolCall("c", "f", {"x": [1, float("inf")]})))
    with pytest.raises(UserError, match=r"the reply\.content\[1\]\.arguments\.x\[1\]: inf"):
        reply_step("1", _PRINT, reply, False)
