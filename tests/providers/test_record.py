"""Record a run's model turns against a (loopback) provider, then replay them offline."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from openprogram.messages import (
    AssistantMessage,
    ImageContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from openprogram.providers import OpenAIProvider
from openprogram.testing import (
    RecordingProvider,
    ReplayMissError,
    ReplayProvider,
    normalize_request,
    record,
    replay,
)

from ._helpers import ADD, drive, request
from ._server import Reply, WireServer, sse

pytestmark = pytest.mark.usefixtures("clean_env")


def chat(*deltas: dict[str, Any], finish: str) -> Reply:
    """A Chat Completions stream (see test_openai for the reference)."""
    events: list[Any] = [{"choices": [{"index": 0, "delta": d}]} for d in deltas]
    events.append(
        {
            "choices": [{"index": 0, "delta": {}, "finish_reason": finish}],
            "usage": {"prompt_tokens": 20, "completion_tokens": 5},
        }
    )
    return Reply(chunks=[sse(*events, "[DONE]")])


def add_call(call_id: str) -> Reply:
    return chat(
        {
            "tool_calls": [
                {
                    "index": 0,
                    "id": call_id,
                    "type": "function",
                    "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'},
                }
            ]
        },
        finish="tool_calls",
    )


def live(wire: WireServer) -> OpenAIProvider:
    return OpenAIProvider(base_url=f"{wire.url}/v1", api_key="sk", model="gpt-4o-mini")


def turn_two(call_id: str) -> Any:
    return request(
        UserMessage("2+3?"),
        AssistantMessage((ToolCall(call_id, "add", {"a": 2, "b": 3}),)),
        ToolResultMessage(call_id, "add", "5"),
        tools=(ADD,),
    )


def test_a_recorded_conversation_replays_offline(wire: WireServer, tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    wire.push(add_call("call_live_1"), chat({"content": "It is 5."}, finish="stop"))
    recorder = record(live(wire), path)
    first = drive(recorder, request("2+3?", tools=(ADD,))).message
    second = drive(recorder, turn_two("call_live_1")).message
    assert second.text == "It is 5."

    document = json.loads(path.read_text())
    assert (document["provider"], document["model"], len(document["turns"])) == (
        "openai",
        "gpt-4o-mini",
        2,
    )
    assert document["turns"][1]["request"]["messages"][1]["content"][0]["id"] == "call_1"

    served = len(wire.requests)
    player = replay(path)
    assert (player.name, player.model, player.native_structured_output) == (
        "openai",
        "gpt-4o-mini",
        True,
    )
    again = drive(player, request("2+3?", tools=(ADD,)))
    assert again.message == first
    assert again.message.usage == first.usage
    assert [type(e).__name__ for e in again.events] == [
        "RequestSent",
        "ToolCallDelta",
        "ResponseDone",
    ]
    # Call ids are renumbered, so a history with other ids still matches.
    assert drive(player, turn_two("call_other")).message.text == "It is 5."
    assert len(wire.requests) == served  # replay never touched the network
    assert len(player.requests) == 2


def test_a_changed_request_says_where_it_differs(wire: WireServer, tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    wire.push(add_call("c1"))
    drive(record(live(wire), path), request("2+3?", tools=(ADD,)))

    with pytest.raises(ReplayMissError) as info:
        drive(replay(path), request("2+4?", tools=(ADD,)))
    message = str(info.value)
    assert "request.messages[0].content" in message
    assert '"2+3?"' in message
    assert '"2+4?"' in message
    assert "record(provider, path)" in message


def test_identical_requests_replay_in_order_then_repeat_the_last(
    wire: WireServer, tmp_path: Path
) -> None:
    path = tmp_path / "run.json"
    wire.push(chat({"content": "one"}, finish="stop"), chat({"content": "two"}, finish="stop"))
    recorder = RecordingProvider(live(wire), path)
    drive(recorder)
    drive(recorder)
    player = ReplayProvider(path)
    assert [drive(player).message.text for _ in range(3)] == ["one", "two", "two"]


def test_images_are_keyed_by_their_hash_not_stored() -> None:
    image = ImageContent(data="aGVsbG8=", mime_type="image/png")
    normalized = normalize_request(request(UserMessage((image,))))
    assert normalized["messages"][0]["content"] == [
        {
            "type": "image",
            "mime_type": "image/png",
            "sha256": "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824",
        }
    ]


def test_a_missing_or_foreign_file_is_explained(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"record\(provider, path\)"):
        replay(tmp_path / "nope.json")
    (tmp_path / "other.json").write_text('{"turns": []}')
    with pytest.raises(ValueError, match="not an openprogram recording"):
        replay(tmp_path / "other.json")


def test_a_failed_call_records_nothing(wire: WireServer, tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    wire.push(Reply(400, {"error": {"message": "bad", "type": "x", "code": None}}))
    recorder = record(live(wire), path)

    async def main() -> None:
        async with recorder:
            with pytest.raises(Exception, match="bad"):
                [e async for e in recorder.stream(request())]

    asyncio.run(main())
    assert not path.exists()


def test_a_whole_runtime_run_replays(wire: WireServer, tmp_path: Path) -> None:
    from openprogram.runtime import Runtime

    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    path = tmp_path / "run.json"
    wire.push(add_call("call_x"), chat({"content": "The sum is 5."}, finish="stop"))
    recorded = Runtime(record(live(wire), path)).exec("2+3?", tools=[add])
    runtime = Runtime(replay(path))
    assert runtime.exec("2+3?", tools=[add]) == recorded == "The sum is 5."
    assert runtime.last_run.usage.input_tokens == 40
    assert len(wire.requests) == 2
