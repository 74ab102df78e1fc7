"""What a journaled step holds, as JSON text: replies, results, picked values, marks.

- a reply (``"reply"``): the ``AssistantMessage`` (``encode_message``: content,
  usage, stop reason, ...), the digests of the messages its request added, and
  the request's head when it changed since the exec's previous turn
  (``explain`` needs it; its digest starts the step's fingerprint);
- a call's result (``"result"``): the text the model saw and, for an error,
  the failure kind (so a replayed ``ToolCallFailed`` says the same);
- a ``choices=`` pick's result: the picked function's return value, written
  with pydantic through the function's return annotation and read back the
  same way (``ValueCodec``);
- a mark (``"started"``, ``"paused"``): the attempt it belongs to.
"""

from __future__ import annotations

import inspect
import json
import typing
from collections.abc import Callable
from json.encoder import encode_basestring_ascii
from typing import Any

from openprogram.durable._fingerprint import Fingerprint
from openprogram.exceptions import UserError
from openprogram.messages import AssistantMessage, ToolCall, ToolResultMessage
from openprogram.messages._json import decode_message, encode_message
from openprogram.stores import Step

__all__ = [
    "ValueCodec",
    "dumps_json",
    "mark_attempt",
    "mark_step",
    "read_reply",
    "read_result",
    "reply_step",
    "result_step",
]


def reply_step(key: str, fingerprint: Fingerprint, reply: AssistantMessage, head: bool) -> Step:
    """The step of a model reply (``head``: also keep the request's head, which changed)."""
    data: dict[str, Any] = {"message": encode_message(reply, "the reply"), "new": fingerprint.new}
    if head:
        data["head"] = fingerprint.head
    return Step(key=key, kind="reply", fingerprint=fingerprint.value, data=dumps_json(data))


def read_reply(step: Step) -> tuple[AssistantMessage, dict[str, Any]]:
    """The reply a step holds, and the rest of what it holds."""
    data = json.loads(step.data)
    message = decode_message(data["message"], f"the journaled reply at {step.key!r}")
    assert isinstance(message, AssistantMessage)  # a reply step holds a reply
    return message, data


def result_step(
    key: str, fingerprint: str, message: ToolResultMessage, failure: str | None
) -> Step:
    """The step of a call's result (``failure``: its failure kind, for an error)."""
    written = "null" if failure is None else _text(failure)
    data = f'{{"content":{_text(message.content)},"failure":{written}}}'
    return Step(key=key, kind="result", fingerprint=fingerprint, data=data)


def _text(value: str) -> str:
    """A string as JSON text (escaped as ASCII when it is ASCII, else kept as UTF-8)."""
    if value.isascii():
        return encode_basestring_ascii(value)
    return dumps_json(value)


def read_result(step: Step, call: ToolCall) -> tuple[ToolResultMessage, str | None]:
    """The result message a step holds for ``call``, and its failure kind (``None``: success)."""
    data = json.loads(step.data)
    failure = data.get("failure")
    message = ToolResultMessage(
        call_id=call.id, tool_name=call.name, content=data["content"], is_error=failure is not None
    )
    return message, failure


def mark_step(key: str, kind: typing.Literal["started", "paused"], attempt: int) -> Step:
    """A mark: a call's body started (or paused) in attempt number ``attempt``."""
    return Step(key=key, kind=kind, fingerprint="", data=f'{{"attempt": {attempt}}}')


def mark_attempt(step: Step | None) -> int:
    """The attempt a mark belongs to (0: no mark)."""
    return 0 if step is None else int(json.loads(step.data)["attempt"])


class ValueCodec:
    """A picked function's return value as JSON and back, through its return annotation.

    Raises (at construction):
        UserError: The annotation cannot be resolved or is no type pydantic handles.
    """

    def __init__(self, fn: Callable[..., Any], name: str) -> None:
        from pydantic import TypeAdapter  # noqa: PLC0415 - deferred for import cost

        self.name = name
        target = inspect.unwrap(fn)
        try:
            hints = typing.get_type_hints(target)
        except Exception as exc:  # noqa: BLE001 - any failure to resolve names the function
            raise UserError(self._unreadable(f"its annotations do not resolve ({exc})")) from None
        annotation = hints.get("return", Any)
        self.annotated = "return" in hints
        try:
            self._adapter: Any = TypeAdapter(annotation)
        except Exception as exc:  # noqa: BLE001 - pydantic's refusal, whatever its class
            why = f"pydantic cannot handle {annotation!r} ({exc})"
            raise UserError(self._unreadable(why)) from None

    def dumps(self, value: Any) -> str:
        """The value as JSON text.

        Raises:
            UserError: It cannot be written, or (without a return annotation) would not
                read back equal.
        """
        try:
            text: str = self._adapter.dump_json(value).decode()
        except Exception as exc:  # noqa: BLE001 - pydantic's serialisation errors vary by type
            why = f"its value {value!r:.60} cannot be written ({exc})"
            raise UserError(self._unreadable(why)) from None
        if not self.annotated and self.loads(text) != value:
            raise UserError(
                self._unreadable(
                    f"its value {value!r:.60} is not plain JSON and it has no return "
                    "annotation to read it back by"
                )
            )
        return text

    def loads(self, text: str) -> Any:
        """The value the text holds."""
        return self._adapter.validate_json(text)

    def _unreadable(self, why: str) -> str:
        return (
            f"the picked function {self.name!r} returns what a durable run cannot journal: {why}. "
            "Annotate its return type with a type pydantic can write and read (a model, a "
            "dataclass, list[int], ...), or run this exec without a store"
        )


def dumps_json(data: Any) -> str:
    """``data`` as JSON text (fast; a lone surrogate is written escaped, as ASCII)."""
    global _to_json  # noqa: PLW0603 - set once, on the first use
    if _to_json is None:
        import pydantic_core  # noqa: PLC0415 - deferred for import cost (a tool's first call loads it)

        _to_json = pydantic_core.to_json
    try:
        return _to_json(data).decode()  # a few times faster than json.dumps
    except ValueError:  # a lone surrogate (PydanticSerializationError): escaped, as ASCII
        return json.dumps(data)


_to_json: Callable[[Any], bytes] | None = None
"""``pydantic_core.to_json``, once imported."""
