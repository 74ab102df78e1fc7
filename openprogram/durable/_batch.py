"""A batch of queued steps as a store writes it: ``Step`` objects, or its row in one go.

The journal queues a model reply or a call's result as it is (``Reply``,
``Result``) and encodes the batch when it is written: encoding a batch at
once costs about half of encoding the same steps one at a time between the
loop's other work (`bench/durable_floor.py`, bench/README.md). A
``StepBatch`` is the ``Sequence[Step]`` a ``RunStore`` is given: a store
that walks its steps gets ``Step`` objects, made on first use; the SQL
stores ask ``row()`` for the batch's row instead (``stores/_run_rows.py``),
written with one call to the JSON encoder and no ``Step`` objects at all.
Both hold the same JSON.

A reply is queued as it is only when nothing in it can change before it is
written and it encodes without fail: no block carries provider data, and its
calls' arguments are dictionaries of JSON scalars by string keys
(``frozen``). Any other reply is encoded when it is queued (a tool body could
change a list it was given in place, and a value JSON cannot carry must fail
at the turn that made it).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any, overload

from openprogram.durable._codec import dumps_json, reply_step, result_step
from openprogram.durable._fingerprint import Fingerprint, call_print
from openprogram.messages import (
    AssistantMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
)
from openprogram.messages._json import encode_message
from openprogram.stores import Step
from openprogram.stores._run_rows import steps_row

__all__ = ["Queued", "Reply", "Result", "StepBatch", "frozen"]


class Reply(tuple[str, Fingerprint, AssistantMessage, bool]):
    """A model reply queued as it is (``Journal.reply``): its key, its request's fingerprint,
    the reply, whether the request's head changed. Made from one tuple (a class of its own
    only to tell it apart: two steps of every model turn are queued)."""

    __slots__ = ()


class Result(tuple[str, str, str, ToolResultMessage, "str | None"]):
    """A call's result queued as it is (``Journal.result``): its key, the tool's name, the
    arguments as JSON with sorted keys, the result, its failure kind (``None``: success)."""

    __slots__ = ()


Queued = Step | Reply | Result
"""What the journal queues: a step already encoded, or a reply or result as it is."""


class StepBatch(Sequence[Step]):
    """The steps of one write, in the order they were queued."""

    __slots__ = ("_items", "_steps")

    def __init__(self, items: list[Queued]) -> None:
        self._items = items
        self._steps: list[Step] | None = None

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, index: int) -> Step: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Step]: ...

    def __getitem__(self, index: int | slice) -> Step | Sequence[Step]:
        return self.steps()[index]

    def __iter__(self) -> Iterator[Step]:
        return iter(self.steps())

    def steps(self) -> list[Step]:
        """The batch as ``Step`` objects (encoded once, on first use)."""
        if self._steps is None:
            self._steps = [_step(item) for item in self._items]
        return self._steps

    def row(self) -> str:
        """The batch's row: a JSON array of ``[key, kind, fingerprint, data]``."""
        items = self._items
        if self._steps is not None or any(type(item) is Step for item in items):
            return steps_row(self.steps())  # a list: written step by step
        rows: list[list[Any]] = []
        for item in items:
            if type(item) is Reply:
                key, fingerprint, reply, head = item
                # Queued only when ``frozen``: its calls' arguments are known to be JSON.
                encoded = encode_message(reply, "the reply", checked=False)
                data: dict[str, Any] = {"message": encoded, "new": fingerprint.new}
                if head:
                    data["head"] = fingerprint.head
                rows.append([key, "reply", fingerprint.value, data])
            else:
                key, name, canonical, message, failure = item  # type: ignore[misc]
                content = {"content": message.content, "failure": failure}
                rows.append([key, "result", call_print(name, {}, canonical), content])
        return dumps_json(rows)


def _step(item: Queued) -> Step:
    kind = type(item)
    if kind is Reply:
        key, fingerprint, reply, head = item  # type: ignore[misc]
        return reply_step(key, fingerprint, reply, head)
    if kind is Result:
        key, name, canonical, message, failure = item  # type: ignore[misc]
        return result_step(key, call_print(name, {}, canonical), message, failure)
    return item  # type: ignore[return-value]


_SCALARS = frozenset({str, int, bool, type(None)})


def frozen(reply: AssistantMessage) -> bool:
    """Whether ``reply`` can wait to be encoded: its blocks are text, thinking or calls without
    provider data, and every call's arguments are a dict of JSON scalars by string keys
    (nothing in it can change before it is encoded, and encoding it cannot fail)."""
    for block in reply.content:
        kind = type(block)
        if kind not in _BLOCKS or block.provider_meta is not None:
            return False
        if kind is ToolCall:
            arguments = block.arguments  # type: ignore[union-attr]
            if type(arguments) is not dict:
                return False
            for name, value in arguments.items():
                kind = type(value)
                if type(name) is not str or (
                    kind not in _SCALARS and (kind is not float or not math.isfinite(value))
                ):
                    return False
    return True


_BLOCKS = frozenset({TextContent, ThinkingContent, ToolCall})
