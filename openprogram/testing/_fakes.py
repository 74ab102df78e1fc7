"""Fake providers for testing programs without a model: scripted replies or a function.

Both record every ``ProviderRequest`` in ``.requests``, stream like a real
provider (``RequestSent``, text deltas word by word, tool-call deltas,
``ResponseDone``), report deterministic approximate usage (about 4 characters
per token) and declare native structured output, so with ``response_format=``
a JSON text reply is the structured answer.
"""

from __future__ import annotations

import dataclasses
import inspect
import itertools
import json
import re
import threading
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterable, Mapping
from contextlib import aclosing
from typing import Any, TypeAlias

from openprogram.messages import (
    AssistantContent,
    AssistantMessage,
    Message,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from openprogram.providers.base import (
    ProviderEvent,
    ProviderRequest,
    RequestSent,
    ResponseDone,
    TextDelta,
    ToolCallDelta,
)

__all__ = [
    "FunctionProvider",
    "Reply",
    "ScriptExhaustedError",
    "ScriptedProvider",
    "call",
    "text",
]

Reply: TypeAlias = Any
"""A scripted reply: a string (text), ``call(...)`` (one call), ``text(...)``, a list of
those (one reply with several blocks: parallel calls, text with calls), an
``AssistantMessage`` (as is), or an exception instance (raised for that request)."""

_WORDS = re.compile(r"\S+\s*|\s+")


class ScriptExhaustedError(AssertionError):
    """A ``ScriptedProvider`` received more requests than its script has replies."""


def call(name: str, arguments: Mapping[str, Any] | None = None, /, **kwargs: Any) -> ToolCall:
    """A scripted tool call: ``call("add", a=1, b=2)`` or ``call("add", {"a": 1, "b": 2})``.

    The fake provider gives every call without an id a unique one (``call_1``, ``call_2``, ...).

    Example:
        >>> call("add", a=1, b=2)
        ToolCall(id='', name='add', arguments={'a': 1, 'b': 2}, arguments_error=None)
    """
    return ToolCall(id="", name=name, arguments={**(arguments or {}), **kwargs})


def text(value: str) -> TextContent:
    """A text block, to put text and calls in one reply: ``[text("Let me look"), call("x")]``."""
    return TextContent(value)


class _Fake:
    """What both fakes share: identity, request log, ids, and streaming a reply."""

    def __init__(self, *, name: str, model: str, native_structured_output: bool) -> None:
        self._name = name
        self._model = model
        self.native_structured_output = native_structured_output
        """Whether ``response_format`` is honoured natively (else a submit tool is used)."""
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._last_prompt: tuple[tuple[Message, ...], int] = ((), 0)
        self.requests: list[ProviderRequest] = []
        """Every request received, in order."""

    @property
    def name(self) -> str:
        """Provider id in events and errors."""
        return self._name

    @property
    def model(self) -> str:
        """The default model id."""
        return self._model

    def _record(self, request: ProviderRequest) -> int:
        with self._lock:  # nested sync execs call from worker threads
            self.requests.append(request)
            return len(self.requests)

    def _to_message(self, reply: Reply, where: str) -> AssistantMessage:
        if isinstance(reply, AssistantMessage):
            if all(call.id for call in reply.tool_calls):
                return reply
            content = tuple(
                self._with_id(b) if isinstance(b, ToolCall) else b for b in reply.content
            )
            return dataclasses.replace(reply, content=content)
        items = list(reply) if isinstance(reply, list | tuple) else [reply]
        blocks: list[AssistantContent] = []
        for item in items:
            if isinstance(item, str):
                blocks.append(TextContent(item))
            elif isinstance(item, ToolCall):
                blocks.append(self._with_id(item))
            elif isinstance(item, TextContent | ThinkingContent):
                blocks.append(item)
            else:
                raise TypeError(
                    f"{where}: {item!r:.80} is not a reply: use a string, call(...), text(...), "
                    "a list of those, an AssistantMessage, or an exception to raise"
                )
        has_calls = any(isinstance(b, ToolCall) for b in blocks)
        return AssistantMessage(tuple(blocks), stop_reason="tool_calls" if has_calls else "stop")

    def _with_id(self, tool_call: ToolCall) -> ToolCall:
        """The call itself if it has an id, else a copy with a fresh unique one."""
        if tool_call.id:
            return tool_call
        return dataclasses.replace(tool_call, id=f"call_{next(self._ids)}")

    def _prompt_size(self, request: ProviderRequest) -> int:
        """Approximate request size; O(new messages) while one run's history grows."""
        messages = request.messages
        seen, size = self._last_prompt
        if not seen or len(messages) < len(seen) or messages[len(seen) - 1] is not seen[-1]:
            seen, size = (), 0  # another run or a new conversation: count from scratch
        size += sum(_message_size(m) for m in messages[len(seen) :])
        self._last_prompt = (messages, size)
        return size + len(request.system or "")

    async def _stream(
        self, request: ProviderRequest, message: AssistantMessage
    ) -> AsyncGenerator[ProviderEvent, None]:
        prompt = self._prompt_size(request)
        yield RequestSent(attempt=1, prompt_size_bytes=prompt)
        out = 0
        index = 0
        for block in message.content:
            if isinstance(block, TextContent):
                out += len(block.text)
                for word in _WORDS.findall(block.text):
                    yield TextDelta(word)
            elif isinstance(block, ToolCall):
                args = _raw_arguments(block.arguments)
                out += len(block.name) + len(args)
                yield ToolCallDelta(index=index, id=block.id, name=block.name, arguments_delta=args)
                index += 1
        if message.usage == Usage():
            usage = Usage(input_tokens=prompt // 4 + 1, output_tokens=out // 4 + 1)
            message = AssistantMessage(
                message.content, message.stop_reason, usage, message.error, message.model
            )
        yield ResponseDone(message)


class ScriptedProvider(_Fake):
    """Replies from a script, one entry per request.

    Args:
        script: The replies in order (see ``Reply``).
        model: Model id it reports.
        name: Provider id it reports.
        native_structured_output: Declare native structured output (``False`` makes
            ``response_format=`` use the hidden submit tool, like providers without it).

    Example:
        >>> from openprogram.runtime import Runtime
        >>> p = ScriptedProvider([call("shout", text="hi"), "They shouted HI."])
        >>> def shout(text: str) -> str:
        ...     "Shout the text."
        ...     return text.upper()
        >>> Runtime(p).exec("Shout hi", tools=[shout])
        'They shouted HI.'
        >>> p.requests[1].messages[-1].content
        'HI'
        >>> p.remaining
        0
    """

    def __init__(
        self,
        script: Iterable[Reply],
        *,
        model: str = "scripted",
        name: str = "scripted",
        native_structured_output: bool = True,
    ) -> None:
        super().__init__(name=name, model=model, native_structured_output=native_structured_output)
        if isinstance(script, str | bytes | Mapping):
            raise TypeError(
                "ScriptedProvider(script=...) must be a list of replies, e.g. ['hello']"
            )
        self._script: list[AssistantMessage | BaseException] = [
            entry if isinstance(entry, BaseException) else self._to_message(entry, f"script[{i}]")
            for i, entry in enumerate(script)
        ]

    @property
    def remaining(self) -> int:
        """Replies not used yet."""
        return len(self._script) - len(self.requests)

    async def stream(self, request: ProviderRequest) -> AsyncIterator[ProviderEvent]:
        """Record ``request`` and stream the next scripted reply.

        Raises:
            ScriptExhaustedError: The script has no reply left for this request.
        """
        number = self._record(request)
        if number > len(self._script):
            raise ScriptExhaustedError(_exhausted_text(number, len(self._script), request))
        entry = self._script[number - 1]
        if isinstance(entry, BaseException):
            raise entry
        # aclosing: the runtime stops reading at ResponseDone; left open, the inner
        # generator would be finalised by the event loop's hook (a self-pipe write per reply).
        async with aclosing(self._stream(request, entry)) as events:
            async for event in events:
                yield event


class FunctionProvider(_Fake):
    """Lets a function decide every reply: ``fn(request) -> Reply`` (sync or async).

    Args:
        fn: Receives each ``ProviderRequest``; returns a reply in any form
            ``ScriptedProvider`` accepts, or raises (e.g. ``LLMError``).
        model: Model id it reports.
        name: Provider id it reports.
        native_structured_output: Declare native structured output (``False`` makes
            ``response_format=`` use the hidden submit tool, like providers without it).
    """

    def __init__(
        self,
        fn: Callable[[ProviderRequest], Any],
        *,
        model: str = "function",
        name: str = "function",
        native_structured_output: bool = True,
    ) -> None:
        if not callable(fn):
            raise TypeError(f"FunctionProvider(fn=...) must be callable, got {fn!r:.60}")
        super().__init__(name=name, model=model, native_structured_output=native_structured_output)
        self._fn = fn

    async def stream(self, request: ProviderRequest) -> AsyncIterator[ProviderEvent]:
        """Record ``request``, ask the function, and stream its reply."""
        number = self._record(request)
        reply = self._fn(request)
        if inspect.isawaitable(reply):
            reply = await reply
        message = self._to_message(reply, f"FunctionProvider reply to request #{number}")
        # aclosing: the runtime stops reading at ResponseDone; left open, the inner
        # generator would be finalised by the event loop's hook (a self-pipe write per reply).
        async with aclosing(self._stream(request, message)) as events:
            async for event in events:
                yield event


def _raw_arguments(arguments: Any) -> str:
    """The JSON a real wire would carry, for the tool-call delta (display only).

    A script may hand the runtime garbage a broken model could produce (a
    cyclic or deeply nested value): the runtime answers it with an error
    result, so the fake must not fail first.
    """
    try:
        return json.dumps(dict(arguments), default=str)
    except (ValueError, RecursionError):
        return "{}"


def _message_size(message: Message) -> int:
    if isinstance(message, UserMessage):
        return len(message.text)
    if isinstance(message, ToolResultMessage):
        return len(message.content) + len(message.tool_name)
    return len(message.text) + sum(len(c.name) + 2 * len(c.arguments) for c in message.tool_calls)


def _exhausted_text(number: int, length: int, request: ProviderRequest) -> str:
    last = request.messages[-1] if request.messages else None
    tools = ", ".join(spec["name"] for spec in request.tools) or "none"
    return (
        f"ScriptedProvider has no reply for request #{number}: its script has {length} "
        f"repl{'y' if length == 1 else 'ies'} and all were used.\n"
        f"  That request had {len(request.messages)} message(s); the last one was "
        f"{_describe(last)}\n"
        f"  tools offered: {tools}; tool_choice: {request.tool_choice!r}\n"
        "Add a reply for it to the script (e.g. a final text like 'done'), or find out "
        "why the program made one more model call than expected."
    )


def _describe(message: Message | None) -> str:
    if message is None:
        return "nothing"
    if isinstance(message, ToolResultMessage):
        status = "error " if message.is_error else ""
        return f"the {status}result of {message.tool_name!r}: {message.content!r:.200}"
    if isinstance(message, UserMessage):
        return f"a user message: {message.text!r:.200}"
    calls = [c.name for c in message.tool_calls]
    return f"an assistant reply: {message.text!r:.120} calls={calls}"
