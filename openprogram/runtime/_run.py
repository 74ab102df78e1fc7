"""The mutable state of one run: ids, conversation, usage, events, and where events go.

A run forwards every event it emits to its ancestors (their ``events`` and
observers), so ``last_run.events`` of a top-level exec holds the whole tree,
and an observer of the outer runtime sees nested runs of other runtimes too.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

from openprogram.events import Event, ToolsResolved, notify
from openprogram.events._delivery import Delivery, is_inline, use_delivery
from openprogram.messages import Message, Usage
from openprogram.providers.base import Provider
from openprogram.runtime._options import ExecOptions
from openprogram.runtime._result import RunResult

if TYPE_CHECKING:
    from openprogram.durable import Fingerprint, Journal, Requests
    from openprogram.runtime._budget import Ledger
    from openprogram.runtime._finale import Finale
    from openprogram.runtime._scope import Menu, ToolScope

__all__ = ["Emitter", "RunState", "new_run_id"]

E = TypeVar("E", bound=Event)
Sink = Callable[[Any], object]


def new_run_id() -> str:
    """A fresh run id (random, so traces of several processes can be merged)."""
    return "run_" + os.urandom(6).hex()


def _unique(callables: Iterable[Sink]) -> tuple[Sink, ...]:
    seen: dict[int, Sink] = {}
    for fn in callables:
        seen.setdefault(id(fn), fn)
    return tuple(seen.values())


class Emitter:
    """Stamps events with the run's ids and hands them to records, observers and streams.

    Attributes:
        run_id: This run's id.
        parent: The emitter of the run whose tool started this one.
        depth: 1 at top level, the parent's depth + 1 in a tool of it (stream events carry it).
        step_id: ``"s<n>"`` of the current model call (``"s0"`` before the first).
        events: Events of this run and of the runs nested in it.
        trace_payloads: Whether payload fields are filled (data policy).
    """

    __slots__ = (
        "_inline",
        "_observers",
        "_queued",
        "_sinks",
        "delivery",
        "depth",
        "events",
        "parent",
        "run_id",
        "step_id",
        "trace_payloads",
    )

    def __init__(
        self,
        *,
        parent: Emitter | None,
        observers: Iterable[Sink],
        sinks: Iterable[Sink] = (),
        trace_payloads: bool = False,
    ) -> None:
        self.run_id = new_run_id()
        self.parent = parent
        self.depth: int = parent.depth + 1 if parent is not None else 1
        self.step_id = "s0"
        self.events: list[Event] = []
        self.trace_payloads = trace_payloads
        inherited_obs: tuple[Sink, ...] = parent._observers if parent is not None else ()
        inherited_sinks: tuple[Sink, ...] = parent._sinks if parent is not None else ()
        self._observers: tuple[Sink, ...] = _unique((*observers, *inherited_obs))
        self._inline = tuple(o for o in self._observers if is_inline(o))
        self._queued = tuple(o for o in self._observers if not is_inline(o))
        self._sinks: tuple[Sink, ...] = _unique((*sinks, *inherited_sinks))
        self.delivery: Delivery = parent.delivery if parent is not None else Delivery()
        """The run tree's observer thread (``events._delivery``), shared by nested runs."""

    @property
    def parent_run_id(self) -> str | None:
        """Id of the parent run, ``None`` at top level."""
        return self.parent.run_id if self.parent is not None else None

    @property
    def streaming(self) -> bool:
        """Whether anyone receives stream events (skip building them otherwise)."""
        return bool(self._sinks)

    def emit(self, cls: type[E], **fields: Any) -> E:
        """Create a ``cls`` event stamped with this run's ids, record it and notify observers."""
        event = cls(
            run_id=self.run_id,
            step_id=self.step_id,
            parent_run_id=self.parent_run_id,
            at=time.time(),
            **fields,
        )
        node: Emitter | None = self
        while node is not None:  # list.append is atomic: nested runs on worker threads are safe
            node.events.append(event)
            node = node.parent
        if self._inline:
            with use_delivery(self.delivery):
                notify(self._inline, event)
        if self._queued:  # off this thread: a slow observer must not stall the loop
            deadline: float | None = getattr(self, "deadline", None)
            self.delivery.submit(notify, self._queued, event, deadline=deadline)
        return event

    async def delivered(self, deadline: float | None) -> None:
        """End of a top-level run: wait for observers to see every event, until ``deadline``."""
        if self.parent is None:
            await self.delivery.drained(deadline)

    def stream(self, cls: Callable[..., Any], **fields: Any) -> None:
        """Send a stream event to ``on_stream`` callbacks and ``stream()`` consumers."""
        if self._sinks:
            event = cls(
                run_id=self.run_id, parent_run_id=self.parent_run_id, depth=self.depth, **fields
            )
            notify(self._sinks, event)


class RunState(Emitter):
    """One exec in progress: the emitter plus conversation, usage and options.

    Attributes:
        runtime: The runtime running it.
        provider: The provider it calls.
        model: The model it asks for (exec's, else the runtime's, else the provider's).
        options: The exec's validated options.
        scope: Its tool scope (set right after construction).
        ledger: The run tree's budget node it charges (set right after construction).
        path: Its position in the run tree (``openprogram.context`` explains positions).
        held: Thread slots held by the sync bodies it runs inside (its calls count them).
        messages: The conversation so far, oldest first.
        usage: Tokens of its model calls and of the runs nested in it.
        iterations: Model calls made.
        stop_reason: Why it ended (updated as it goes).
        failures: Failed-call counts by (name, arguments) for the repeated-failure rule.
        call_ids: Every tool-call id in the conversation (a reply's ids are made unique).
        attempt: Attempts made so far for the current model call (1 = no retry yet).
        answering: Provider id and model of the current model call (a fallback switches them).
        finale: How the final reply becomes the output with ``choices``/``response_format``.
        system: The system prompt without the deferred-tool catalog.
        deadline: ``time.monotonic()`` by which the exec must end, or ``None``.
        started: ``time.monotonic()`` at its start.
        reserved: Whether the run still holds the model call its budget keeps for its answer.
        told_to_answer: Whether the budget already asked the model to answer now.
        withdrawn: Why the last request allowed no tool calls (the text answering any
            call its reply still made), or ``None`` when calls may run.
        journal: The run tree's journal, when the tree is a durable run.
        requests: Fingerprints of its requests so far (durable runs only).
        turn: The journal key and fingerprint of the current model turn (durable runs only).
        stepped: The journal key of each message a journaled step made, by ``id`` (durable
            runs only: the fingerprints of later requests name them by it).
        head: Digest of the head of its last journaled request (durable runs only).
        key_prefix: Its position as text, ready for a turn number: ``""`` for the root
            exec, ``"1.0/0/"`` for one nested in call ``1.0`` (durable runs only).
    """

    __slots__ = (
        "answering",
        "attempt",
        "call_ids",
        "deadline",
        "failures",
        "finale",
        "head",
        "held",
        "iterations",
        "journal",
        "key_prefix",
        "ledger",
        "messages",
        "model",
        "options",
        "output",
        "path",
        "provider",
        "requests",
        "reserved",
        "runtime",
        "scope",
        "started",
        "stepped",
        "stop_reason",
        "system",
        "told_to_answer",
        "turn",
        "usage",
        "withdrawn",
    )

    def __init__(
        self,
        *,
        runtime: Any,
        provider: Provider,
        options: ExecOptions,
        parent: RunState | None,
        sinks: Iterable[Sink],
        system: str | None,
        deadline: float | None,
    ) -> None:
        super().__init__(
            parent=parent,
            observers=runtime.observers,
            sinks=sinks,
            trace_payloads=runtime.trace_payloads,
        )
        self.runtime = runtime
        self.provider = provider
        self.model: str | None = options.model or runtime.model or provider.model
        self.answering: tuple[str, str | None] = (provider.name, self.model)
        self.options = options
        self.messages: list[Message] = []
        self.usage = Usage()
        self.iterations = 0
        self.stop_reason = "stop"
        self.output: Any = None
        self.failures: dict[str, int] = {}
        self.call_ids: set[str] = set()
        self.attempt = 1
        self.system = system
        self.deadline = deadline
        self.started = time.monotonic()
        self.scope: ToolScope
        self.ledger: Ledger
        self.path: tuple[int, ...] = ()
        self.held = 0
        self.finale: Finale | None = None
        self.withdrawn: str | None = None
        self.reserved = False
        self.told_to_answer = False
        self.journal: Journal | None = None
        self.requests: Requests | None = None  # made with the journal: ``_durable``
        self.turn: tuple[str, Fingerprint] | None = None
        self.stepped: dict[int, str] = {}
        self.head: str | None = None
        self.key_prefix = ""

    def request_system(self) -> str | None:
        """The system prompt of the next request: the base prompt plus the deferred catalog."""
        catalog = self.scope.menu.catalog
        if catalog is None:
            return self.system
        return catalog if not self.system else f"{self.system}\n\n{catalog}"

    def tools_resolved(self, menu: Menu) -> None:
        """Emit ``ToolsResolved`` for ``menu``."""
        self.emit(
            ToolsResolved,
            menu_hash=menu.core.menu_hash,
            offered=menu.core.names,
            deferred=menu.core.deferred_names,
            rejected=menu.rejected,
        )

    def result(self) -> RunResult:
        """Freeze the record of the run."""
        return RunResult(
            run_id=self.run_id,
            output=self.output,
            messages=tuple(self.messages),
            usage=self.usage,
            budget_usage=self.ledger.root.usage(),
            iterations=self.iterations,
            stop_reason=self.stop_reason,
            events=tuple(self.events),
        )
