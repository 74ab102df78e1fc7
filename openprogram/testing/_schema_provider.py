"""``SchemaProvider``: a fake model that calls every offered tool once, then answers.

For smoke tests of whole programs: no script to write. In each exec (each
conversation it is shown) it first asks for every offered tool it has not
called yet, with arguments generated from the tool's own parameter schema
(``example_value``: valid, deterministic for a seed, no Hypothesis needed);
once each was called it answers. A nested agentic function's exec is a
conversation of its own, so its menu gets the same treatment.

The answer is text (``answer=``, or a line listing the tools called); with
``response_format`` it is a JSON value generated from that schema, and under
``choices=`` it picks the first option that takes no arguments (else the
first option, with arguments generated from nothing it can see: ``{}``).
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from openprogram.messages import AssistantMessage, ToolCall, UserMessage
from openprogram.providers.base import ProviderEvent, ProviderRequest
from openprogram.testing._fakes import _Fake
from openprogram.testing._json_values import UnsupportedSchemaError, example_value

__all__ = ["SchemaProvider"]

_MENU = "Options (finish your reply by picking exactly one):"
_OPTION = re.compile(r'^- (?:"((?:[^"\\]|\\.)*)"|([^\s(:]+))(\()?', re.MULTILINE)


class SchemaProvider(_Fake):
    """Calls every offered tool once with valid generated arguments, then answers.

    Args:
        seed: Picks the generated arguments and structured answers (same seed,
            same values).
        answer: The final text, or ``fn(request) -> str``; default: a line naming
            the tools called in that conversation.
        skip: Tool names never called (e.g. one that deletes files).
        model: Model id it reports.
        name: Provider id it reports.
        native_structured_output: Declare native structured output (``False``:
            ``response_format=`` goes through the hidden submit tool, which is
            then called like any other tool, with valid generated arguments).

    Example:
        >>> from openprogram import Runtime
        >>> def add(a: int, b: int) -> int:
        ...     "Add two integers."
        ...     return a + b
        >>> model = SchemaProvider(answer="done")
        >>> Runtime(model).exec("Add something", tools=[add])
        'done'
        >>> [c.name for c in model.calls]
        ['add']
    """

    def __init__(
        self,
        *,
        seed: int = 0,
        answer: str | Callable[[ProviderRequest], str] | None = None,
        skip: Sequence[str] = (),
        model: str = "schema",
        name: str = "schema",
        native_structured_output: bool = True,
    ) -> None:
        super().__init__(name=name, model=model, native_structured_output=native_structured_output)
        self._seed = seed
        self._answer = answer
        self._skip = frozenset(skip)
        self.calls: list[ToolCall] = []
        """Every tool call it asked for, in order (across all conversations)."""

    async def stream(self, request: ProviderRequest) -> AsyncIterator[ProviderEvent]:
        """Record ``request``; reply with calls of the tools not called yet, else answer.

        Raises:
            UnsupportedSchemaError: A tool's parameters (or the response format) use a
                JSON Schema keyword the value generator does not cover.
        """
        self._record(request)
        message = self._to_message(self._reply(request), "SchemaProvider")
        with self._lock:
            self.calls.extend(message.tool_calls)
        async for event in self._stream(request, message):
            yield event

    def _reply(self, request: ProviderRequest) -> Any:
        pending = self._pending(request)
        if pending:
            if not request.parallel_tool_calls:
                pending = pending[:1]
            return [self._call(spec) for spec in pending]
        return self._final(request)

    def _pending(self, request: ProviderRequest) -> list[Any]:
        """Offered tools this conversation has not called yet (respecting ``tool_choice``)."""
        if request.tool_choice == "none":
            return []
        called = {
            call.name
            for message in request.messages
            if isinstance(message, AssistantMessage)
            for call in message.tool_calls
        }
        specs = [s for s in request.tools if s["name"] not in self._skip | called]
        choice = request.tool_choice
        if not isinstance(choice, str):  # {"type": "function", "name": X}: only X
            forced = choice.get("name")
            specs = [s for s in specs if s["name"] == forced]
        return specs

    def _call(self, spec: Any) -> ToolCall:
        name = str(spec["name"])
        try:
            arguments = example_value(spec.get("parameters", {}), seed=self._seed_for(name))
        except UnsupportedSchemaError as exc:
            raise UnsupportedSchemaError(f"tool {name!r}: {exc}") from exc
        return ToolCall(id="", name=name, arguments=arguments)

    def _seed_for(self, name: str) -> int:
        return self._seed ^ zlib.crc32(name.encode())

    def _final(self, request: ProviderRequest) -> str:
        if request.response_format is not None:
            schema = request.response_format.schema
            return json.dumps(example_value(schema, seed=self._seed))
        pick = _pick(request)
        if pick is not None:
            return pick
        if callable(self._answer):
            return str(self._answer(request))
        if self._answer is not None:
            return self._answer
        called = [
            call.name
            for message in request.messages
            if isinstance(message, AssistantMessage)
            for call in message.tool_calls
        ]
        return f"Called {', '.join(called)}." if called else "Nothing to call."


def _pick(request: ProviderRequest) -> str | None:
    """The pick for a ``choices=`` menu in the latest user message, if there is one."""
    last = next((m for m in reversed(request.messages) if isinstance(m, UserMessage)), None)
    text = last.text if last is not None else ""
    if _MENU not in text:
        return None
    options = [
        (json.loads(f'"{quoted}"') if quoted else bare, bool(paren))
        for quoted, bare, paren in _OPTION.findall(text.split(_MENU, 1)[1])
    ]
    if not options:
        return None
    name = next((n for n, takes_args in options if not takes_args), options[0][0])
    return json.dumps({"call": name})
