"""``Conversation``: sends that continue from what was said before, saved in a store.

Each send is one exec whose history is the conversation as stored when the
send starts (trimmed by the conversation's ``trim``), and whose own messages
(the user's content, replies, tool results; never those of execs nested in
tools) are appended when it ends. The store's ``lock_conversation`` is held
across the whole send, so sends on one conversation, from any ``Conversation``
object, runtime, thread or process sharing the store, run one after another.
A send that raises appends nothing. ``stream`` is a send whose stream events
are yielded as they come, its ``StreamFinal`` once the reply is saved.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar, Unpack, overload

from openprogram.exceptions import UserError
from openprogram.messages import Message, trim_history
from openprogram.runtime._bound import exec_depth
from openprogram.runtime._held import get_held, use_held
from openprogram.runtime._options import (
    CommonExecKwargs,
    ExecKwargs,
    ExecOptions,
    FormatKwargs,
    PickKwargs,
    checked_history,
)
from openprogram.runtime._result import RunResult
from openprogram.runtime._run import Sink
from openprogram.runtime._start import run_exec
from openprogram.runtime._stream import StreamEvent, stream_events
from openprogram.runtime._sync import run_sync
from openprogram.runtime._unmatched import (
    keywords_with_choices,
    keywords_without_choices,
    unmatched,
)
from openprogram.stores import Store

if TYPE_CHECKING:
    from types import UnionType
    from typing import _SpecialForm

    from openprogram.runtime._runtime import Runtime
    from openprogram.structured import OutputSchema

__all__ = ["DEFAULT_TRIM", "Conversation", "Trim"]

Trim: TypeAlias = Callable[[tuple[Message, ...]], Sequence[Message]]
"""A hook from the stored conversation to the history a send continues from."""

DEFAULT_TRIM: Trim = partial(trim_history, max_chars=100_000)
"""The newest exchanges within 100,000 characters (about 25,000 tokens), never a tool
result without its call (``openprogram.messages.trim_history``)."""

_T = TypeVar("_T")
_Schema: TypeAlias = "Mapping[str, Any] | OutputSchema | _SpecialForm | UnionType"
"""A ``response_format`` that types no answer (as for ``Runtime.exec``): the answer is ``Any``."""


class Conversation:
    """A conversation with the model, continued by each ``send`` and kept in a store.

    Made by ``runtime.conversation(conversation_id=None, **exec_defaults)``: the
    keyword options are defaults for every send (a send's own options win).

    Example:
        >>> from openprogram import Runtime
        >>> from openprogram.testing import ScriptedProvider
        >>> chat = Runtime(ScriptedProvider(["Hi Ann!", "You are Ann."])).conversation()
        >>> chat.send("I am Ann.")
        'Hi Ann!'
        >>> chat.send("Who am I?")
        'You are Ann.'
        >>> [m.text for m in chat.messages]
        ['I am Ann.', 'Hi Ann!', 'Who am I?', 'You are Ann.']
    """

    def __init__(
        self,
        runtime: Runtime,
        store: Store,
        conversation_id: str | None,
        *,
        trim: Trim | None,
        defaults: Mapping[str, Any],
    ) -> None:
        """Use ``runtime.conversation(...)``, which checks the arguments."""
        self._runtime = runtime
        self._store = store
        self._id = conversation_id or f"conv_{os.urandom(8).hex()}"
        self._trim = trim
        self._defaults = dict(defaults)
        self._known: tuple[Message, ...] = ()  # the stored messages this object has read

    @property
    def conversation_id(self) -> str:
        """The conversation's id: ``runtime.conversation(id)`` with the same store continues it."""
        return self._id

    @property
    def store(self) -> Store:
        """Where the conversation is kept."""
        return self._store

    @property
    def messages(self) -> tuple[Message, ...]:
        """The whole conversation as stored now, oldest first (read from the store)."""
        return run_sync(self.amessages)

    async def amessages(self) -> tuple[Message, ...]:
        """``messages`` for async code."""
        return await self._refreshed()

    def __repr__(self) -> str:
        return f"Conversation(conversation_id={self._id!r}, store={self._store!r})"

    # The overloads type the answer as exec's do: text, a value of the class, a JSON value;
    # with choices= the answer is Any here (exec types it by the options).
    @overload
    def send(
        self,
        content: Any,
        *,
        response_format: None = None,
        choices: None = None,
        **options: Unpack[CommonExecKwargs],
    ) -> str: ...
    @overload
    def send(
        self, content: Any, *, response_format: type[_T], **options: Unpack[FormatKwargs]
    ) -> _T: ...
    @overload
    def send(
        self, content: Any, *, response_format: _Schema, **options: Unpack[FormatKwargs]
    ) -> Any: ...
    @overload
    def send(self, content: Any, *, choices: Any, **options: Unpack[PickKwargs]) -> Any: ...
    @overload
    @unmatched(keywords_without_choices)
    def send(self, content: Any, **options: Any) -> Any: ...
    @overload
    @unmatched(keywords_with_choices)
    def send(self, content: Any, **options: Any) -> Any: ...
    def send(self, content: Any, **options: Any) -> Any:
        """Send ``content`` and return the answer, as ``runtime.exec`` would.

        The model sees the conversation so far (trimmed), then ``content``; the
        exec's messages are then appended and saved. Takes every option of
        ``exec`` except ``history`` (the conversation supplies it). Works from any
        thread and from inside a running event loop, like ``exec``.

        Raises:
            UserError: ``history=`` was given, or an option is invalid.
            OpenProgramError: The stored conversation changed under this send (its
                turn ran out); the reply was not saved.
            Exception: Whatever ``exec`` raises; then nothing is appended.
        """
        return run_sync(lambda: self.asend(content, **options))

    @overload
    async def asend(
        self,
        content: Any,
        *,
        response_format: None = None,
        choices: None = None,
        **options: Unpack[CommonExecKwargs],
    ) -> str: ...
    @overload
    async def asend(
        self, content: Any, *, response_format: type[_T], **options: Unpack[FormatKwargs]
    ) -> _T: ...
    @overload
    async def asend(
        self, content: Any, *, response_format: _Schema, **options: Unpack[FormatKwargs]
    ) -> Any: ...
    @overload
    async def asend(self, content: Any, *, choices: Any, **options: Unpack[PickKwargs]) -> Any: ...
    @overload
    @unmatched(keywords_without_choices)
    async def asend(self, content: Any, **options: Any) -> Any: ...
    @overload
    @unmatched(keywords_with_choices)
    async def asend(self, content: Any, **options: Any) -> Any: ...
    async def asend(self, content: Any, **options: Any) -> Any:
        """``send`` for async code: same options, same result, same errors."""
        return await self._send(content, self._options(options), ())

    def stream(
        self, content: Any, **options: Unpack[ExecKwargs]
    ) -> AsyncGenerator[StreamEvent, None]:
        """Send ``content`` and yield the send's stream events as they come (docs/streaming.md).

        The events are ``runtime.stream``'s: text deltas, tool calls and
        results, nested runs' events; the last is the send's ``StreamFinal``,
        yielded once the reply is saved, so a loop may stop there. Closing the
        iterator earlier cancels the send, which then appends nothing. Takes
        ``send``'s options.

        Raises:
            UserError: ``history=`` was given, or an option is invalid (at the call).
            Exception: What ``send`` raises, from the iteration instead of a final.
        """
        parsed = self._options(options)
        return stream_events(
            lambda sink: self._send(content, parsed, (sink,)),
            lambda: exec_depth(self._runtime),
        )

    def _options(self, options: Mapping[str, Any]) -> ExecOptions:
        if "history" in options:
            raise UserError(
                "send(history=...): a conversation supplies its own history; to run from "
                "other messages use runtime.exec(content, history=...)"
            )
        return ExecOptions.from_kwargs({**self._defaults, **options})

    async def _send(self, content: Any, parsed: ExecOptions, sinks: Sequence[Sink]) -> Any:
        key = (id(self._store), self._id)
        if key in get_held():
            raise UserError(
                f"send on conversation {self._id!r} from inside a send on it (a tool of that "
                "send, or an exec nested in one): it would wait for itself; use another "
                "conversation, or runtime.exec(..., history=chat.messages)"
            )
        async with self._store.lock_conversation(self._id):
            stored = await self._refreshed()
            history = checked_history(self._trimmed(stored))
            records: list[RunResult] = []
            run = dataclasses.replace(parsed, history=history)
            with use_held(key):
                output = await run_exec(self._runtime, content, run, sinks, records.append)
            added = records[-1].messages[len(history) :]
            await self._store.append_conversation(self._id, added, start=len(stored))
            self._known = (*stored, *added)
        return output

    async def _refreshed(self) -> tuple[Message, ...]:
        """The stored conversation: what this object read before, plus what was added since."""
        known = self._known
        added = await self._store.load_conversation(self._id, len(known))
        if added:
            known = self._known = (*known, *added)
        return known

    def _trimmed(self, stored: tuple[Message, ...]) -> Sequence[Message]:
        if self._trim is None:
            return stored
        history = self._trim(stored)
        if isinstance(history, str) or not isinstance(history, Sequence):
            raise UserError(
                f"the conversation's trim hook returned {type(history).__name__}, not a "
                "sequence of messages; it takes the stored messages and returns the ones to "
                "send (e.g. openprogram.messages.trim_history)"
            )
        return history


def check_conversation_arguments(
    conversation_id: Any, trim: Any, defaults: Mapping[str, Any]
) -> None:
    """Reject ``runtime.conversation(...)`` arguments of the wrong kind, before any send.

    Raises:
        UserError: A bad id, trim hook, ``history=`` default or exec option.
        TypeError: An unknown exec option.
    """
    if conversation_id is not None and not (isinstance(conversation_id, str) and conversation_id):
        raise UserError(
            f"runtime.conversation({conversation_id!r:.60}): the id must be a non-empty string, "
            "or None to have one generated"
        )
    if trim is not None and not callable(trim):
        raise UserError(
            f"runtime.conversation(trim={trim!r:.60}): give a callable from the stored messages "
            "to the ones to send (e.g. functools.partial(trim_history, max_chars=20_000)), "
            "or None to send them all"
        )
    if "history" in defaults:
        raise UserError(
            "runtime.conversation(history=...): a conversation supplies its own history"
        )
    ExecOptions.from_kwargs(defaults)
