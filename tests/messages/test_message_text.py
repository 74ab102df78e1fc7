"""Every message has ``.text``, so code reading ``request.messages[i].text`` works for any kind."""

from __future__ import annotations

from openprogram import Runtime, function
from openprogram.messages import (
    AssistantMessage,
    Message,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from openprogram.testing import ScriptedProvider, call


@function(register_globally=False)
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def test_each_kind_of_message_reads_as_its_text() -> None:
    messages: list[Message] = [
        UserMessage("Add 1 and 2."),
        AssistantMessage(
            (ThinkingContent("hmm"), TextContent("Adding."), ToolCall("c1", "add", {}))
        ),
        ToolResultMessage(call_id="c1", tool_name="add", content="3"),
        ToolResultMessage(
            call_id="c2", tool_name="add", content="b: expected integer", is_error=True
        ),
    ]
    assert [m.text for m in messages] == ["Add 1 and 2.", "Adding.", "3", "b: expected integer"]


def test_a_tool_result_in_a_request_reads_as_what_the_model_sees() -> None:
    provider = ScriptedProvider([call("add", a=1, b=2), "It is 3."])
    assert Runtime(provider).exec("Add 1 and 2.", tools=[add]) == "It is 3."
    assert [m.text for m in provider.requests[1].messages] == ["Add 1 and 2.", "", "3"]
