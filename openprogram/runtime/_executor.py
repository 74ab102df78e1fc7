"""The tool executor: one result per call, in call order, whatever happens.

No calls → nothing; one → run inline; several → concurrently (at most
``MAX_PARALLEL`` sync bodies of a batch at once; async bodies are gathered),
unless a called tool has ``parallel_safe=False`` or the exec asked for
``parallel_tool_calls=False``: then one after another, in call order.

Before a body runs, a call passes these checks, each failure becoming an error
result the model can act on: the name is in the menu (law 8: otherwise it is
never executed), the arguments parsed, the nesting depth allows an agentic
function, and approval (a tool needing approval with no hook is denied: fail
closed). The body itself (``Tool.execute``) validates, applies the tool's
timeout and truncates the result.

In a durable run (docs/durable.md) each call asks the journal first: a
recorded result comes back without the body running (``_replay``), a
person's decision stands in for the approval hook (``_waiting``), a
``side_effect`` call whose earlier attempt never finished is not run again
(``_effects``), and every result is journaled. A call the hook pauses is not
run; once the rest of the batch has finished, the batch raises
``PauseSignal`` for every call that waits (also those waiting inside the
bodies of its agentic calls).
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial

from openprogram._pause import PAUSE, Pause, PendingCall
from openprogram.context import Frame, get_frame, new_counter, use_frame
from openprogram.durable import idempotency_key
from openprogram.events import (
    SkipReason,
    ToolCallProgress,
    ToolCallStarted,
    ToolFailureKind,
    digest,
    size_bytes,
)
from openprogram.messages import ToolCall, ToolResultMessage
from openprogram.runtime._approval import Approval, approval_denial
from openprogram.runtime._bound import call_frame
from openprogram.runtime._call_batch import Batch
from openprogram.runtime._call_end import finish, paused, schema_hash, skip
from openprogram.runtime._effects import before_body, body_paused, unknown_outcome
from openprogram.runtime._refusal import refusal_of
from openprogram.runtime._replay import SKIPPED, record_result, recorded_result
from openprogram.runtime._run import Emitter
from openprogram.runtime._spend import exhausted, refused_text, runs_on_thread, take_call
from openprogram.runtime._stream import StreamProgress
from openprogram.runtime._waiting import PauseSignal, pause_without_store, verdict
from openprogram.tools import Tool, ToolContext, ToolResult

__all__ = [
    "MAX_PARALLEL",
    "QUEUED_MESSAGE_SKIP",
    "REPEAT_LIMIT",
    "Approval",
    "Batch",
    "run_batch",
    "skip_calls",
]

MAX_PARALLEL = 8
"""Most sync tool bodies of one batch running at once (docs/design.md, "The executor")."""

REPEAT_LIMIT = 2
"""After this many failures of one exact call, the next identical call is not run."""

_CANCELLED = "Cancelled: the exec was cancelled or its timeout_s expired while this call ran."

QUEUED_MESSAGE_SKIP = "Skipped due to queued user message"
"""The result of a call not yet started when a steering message arrives."""


@dataclass(frozen=True, slots=True)
class _Waiting:
    """A call that waits for a person (or whose body has calls that do)."""

    pending: tuple[PendingCall, ...]


async def run_batch(calls: Sequence[ToolCall], batch: Batch) -> list[ToolResultMessage]:
    """Run one batch of calls and return one result per call, in call order.

    Raises:
        PauseSignal: Calls of the batch wait for a person (the others have finished).
    """
    if not calls:
        return []
    if len(calls) == 1:
        return _answered([await _run_call(calls[0], 0, batch)])
    called = [batch.tools.get(call.name) for call in calls]
    if batch.sequential or any(tool is not None and not tool.parallel_safe for tool in called):
        return _answered([await _run_call(call, k, batch) for k, call in enumerate(calls)])
    slots = asyncio.Semaphore(MAX_PARALLEL)
    pending = (
        _slotted(c, k, t, batch, slots) for k, (c, t) in enumerate(zip(calls, called, strict=True))
    )
    return _answered(list(await asyncio.gather(*pending)))


def _answered(outcomes: list[ToolResultMessage | _Waiting]) -> list[ToolResultMessage]:
    waiting = [p for outcome in outcomes if isinstance(outcome, _Waiting) for p in outcome.pending]
    if waiting:
        raise PauseSignal(waiting)
    return outcomes  # type: ignore[return-value] # no _Waiting among them


async def _slotted(
    call: ToolCall, index: int, tool: Tool | None, batch: Batch, slots: asyncio.Semaphore
) -> ToolResultMessage | _Waiting:
    if tool is None or not runs_on_thread(tool):
        return await _run_call(call, index, batch)  # async bodies (and refusals) need no slot
    async with slots:
        return await _run_call(call, index, batch)


def skip_calls(
    calls: Iterable[ToolCall], emitter: Emitter, reason: SkipReason, text: str
) -> list[ToolResultMessage]:
    """Answer calls without running them (one result each, with ``ToolCallSkipped``)."""
    return [skip(call, emitter, reason, text) for call in calls]


async def _run_call(call: ToolCall, index: int, batch: Batch) -> ToolResultMessage | _Waiting:
    emitter, journal = batch.emitter, batch.journal
    tool = batch.tools.get(call.name)
    call, canonical = _canonical(call)
    key = f"{batch.turn_key}.{index}" if journal is not None else ""
    # Malformed calls all carry {} as arguments, so they are never "the same call".
    tracked = batch.failures is not None and tool is not None and call.arguments_error is None
    same = f"{call.name}\0{canonical}"
    failed = batch.failures.get(same, 0) if tracked and batch.failures is not None else 0
    if journal is not None and journal.recorded:
        replayed = recorded_result(
            call,
            key,
            journal=journal,
            emitter=emitter,
            ledger=batch.ledger,
            tool=tool,
            canonical=canonical,
        )
        if replayed is not None:
            return _counted(replayed[0], tracked, same, failed, batch)
    if batch.interrupted is not None and batch.interrupted():
        return _skipped(call, key, canonical, batch, "queued_user_message", QUEUED_MESSAGE_SKIP)
    if failed >= REPEAT_LIMIT:
        text = (
            f"Not run: this exact call ({call.name!r} with the same arguments) already failed "
            f"{failed} times. Do not repeat it: change the arguments or try another approach."
        )
        return _skipped(call, key, canonical, batch, "repeated_failure", text)
    started = time.monotonic()
    emitter.emit(
        ToolCallStarted,
        tool_name=call.name,
        call_id=call.id,
        input_schema_hash=schema_hash(tool, batch.schema_hashes) if tool is not None else None,
        arguments_hash=digest(canonical),
        arguments_size_bytes=size_bytes(canonical),
        arguments=call.arguments if emitter.trace_payloads else None,
    )
    try:
        outcome = await _checked_run(call, index, key, tool, batch)
    except asyncio.CancelledError:
        # The exec was cancelled or its timeout_s fired: close the started call, then stop.
        finish(call, batch, started, None, ("cancelled", _CANCELLED))
        raise
    if isinstance(outcome, _Waiting):
        paused(call, emitter, key)
        return outcome
    message, failure = finish(call, batch, started, *outcome)
    if journal is not None:
        record_result(call, key, journal, message, failure=failure, canonical=canonical)
    return _counted(message, tracked, same, failed, batch)


def _counted(
    message: ToolResultMessage, tracked: bool, same: str, failed: int, batch: Batch
) -> ToolResultMessage:
    """Count the call's failure (or clear it) for the repeated-failure rule."""
    if tracked and batch.failures is not None:
        if message.is_error:
            batch.failures[same] = failed + 1
        else:
            batch.failures.pop(same, None)
    return message


def _skipped(  # noqa: PLR0917 - the call, where it is, and why it is skipped
    call: ToolCall, key: str, canonical: str, batch: Batch, reason: SkipReason, text: str
) -> ToolResultMessage:
    message = skip(call, batch.emitter, reason, text)
    if batch.journal is not None:
        failure = f"{SKIPPED}{reason}"
        record_result(call, key, batch.journal, message, failure=failure, canonical=canonical)
    return message


@dataclass(frozen=True, slots=True)
class _Site:
    """One call of a batch: its position, its cancel event, the counter of execs started in it."""

    index: int
    key: str
    cancel: threading.Event = field(default_factory=threading.Event)
    children: Callable[[], int] = field(default_factory=new_counter)


_Outcome = tuple[ToolResult | None, tuple[ToolFailureKind, str] | None] | _Waiting


async def _checked_run(
    call: ToolCall, index: int, key: str, tool: Tool | None, batch: Batch
) -> _Outcome:
    """The checks of a started call, then its body: ``(result, None)``, ``(None, refusal)``,
    or ``_Waiting`` when it waits for a person."""
    refusal = refusal_of(call, tool, batch.tools, batch.deferred, batch.depth_limit)
    if refusal is not None or tool is None:
        return None, refusal
    site = _Site(index, key)
    journal = batch.journal
    unknown = unknown_outcome(journal, key, tool) if journal is not None else None
    if unknown is None:
        answer = await _decided(call, site, tool, batch)
        if answer is PAUSE:
            return _Waiting(
                (
                    PendingCall(
                        call_id=call.id,
                        path=key,
                        tool_name=call.name,
                        arguments=dict(call.arguments),
                    ),
                )
            )
        if answer:
            return None, ("denied", f"Tool call {call.name!r} was denied: {answer}")
    ledger = batch.ledger
    if ledger is None:
        return await _run_body(call, site, tool, batch, batch.held, unknown=unknown)
    threaded = runs_on_thread(tool) and unknown is None
    spent = (
        await take_call(
            ledger,
            threaded=True,
            agentic=tool.kind == "agentic",
            depth=batch.depth,
            max_depth=batch.max_depth,
            held=batch.held,
        )
        if threaded
        else ledger.charge_call(tool.kind == "agentic")  # no slot to wait for: no await
    )
    if spent is not None:
        exhausted(batch.emitter, ledger, spent)
        return None, ("budget", refused_text(call.name, ledger, spent))
    if not threaded:
        return await _run_body(call, site, tool, batch, batch.held, unknown=unknown)
    try:  # execs nested in the body count its slot, so they keep room for its children
        return await _run_body(call, site, tool, batch, batch.held + 1, unknown=unknown)
    finally:
        ledger.release_thread()


async def _decided(call: ToolCall, site: _Site, tool: Tool, batch: Batch) -> str | Pause | None:
    """The verdict on a call: a recorded decision, else the approval hook (``_waiting``)."""
    journal = batch.journal
    if journal is not None and journal.gated:
        return await verdict(call, site.key, journal, partial(_approval, call, site, tool, batch))
    answer = await _approval(call, site, tool, batch)
    if answer is PAUSE and journal is None:
        raise pause_without_store(call.name)
    return answer


async def _run_body(
    call: ToolCall, site: _Site, tool: Tool, batch: Batch, held: int, *, unknown: str | None
) -> _Outcome:
    if unknown is not None:  # a side_effect call an earlier attempt started: never again
        return None, ("unknown_outcome", unknown)
    outcome = await _invoke(call, site, tool, batch, held)
    return outcome if isinstance(outcome, _Waiting) else (outcome, None)


async def _approval(call: ToolCall, site: _Site, tool: Tool, batch: Batch) -> str | Pause | None:
    """The approval verdict; a hook (user code) runs in the call's frame, like its body."""
    rule = tool.requires_approval
    if batch.approval is None and not callable(rule):
        return await approval_denial(call, rule, None) if rule else None
    with use_frame(_call_frame(site, batch, batch.held)):
        try:
            return await approval_denial(call, tool.requires_approval, batch.approval)
        except asyncio.CancelledError:
            site.cancel.set()  # an exec in the hook stops when the batch is cancelled
            raise


def _canonical(call: ToolCall) -> tuple[ToolCall, str]:
    """The call and its arguments as sorted JSON (the identity of "the same call").

    Arguments nested too deeply to encode (a model's garbage, or a host's
    cyclic object) make the call malformed instead of crashing the batch.
    """
    try:
        return call, json.dumps(call.arguments, sort_keys=True, default=str)
    except (RecursionError, ValueError) as exc:
        why = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        return replace(call, arguments={}, arguments_error=f"unreadable arguments: {why}"), "{}"


async def _invoke(
    call: ToolCall, site: _Site, tool: Tool, batch: Batch, held: int
) -> ToolResult | _Waiting:
    emitter, journal = batch.emitter, batch.journal

    def report(text: str) -> None:
        payload = text if emitter.trace_payloads else None
        emitter.emit(
            ToolCallProgress,
            tool_name=call.name,
            call_id=call.id,
            size_bytes=size_bytes(text),
            text=payload,
        )
        emitter.stream(StreamProgress, call_id=call.id, tool_name=call.name, text=text)

    context = ToolContext(
        call_id=call.id,
        tool_name=call.name,
        deps=batch.deps,
        cancel=site.cancel,
        on_report=report,
    )
    frame = _call_frame(site, batch, held)
    context.runtime = frame.runtime
    attempt = 0
    if journal is not None and (tool.effect == "side_effect" or tool.reads_context):
        # Only a body given its context can read the key; the call is written before it runs.
        context.idempotency_key = idempotency_key(journal.run_id, site.key)
        attempt = await before_body(journal, site.key, tool)
    try:
        with use_frame(frame):  # the body, and what it starts, runs in the call's frame
            return await tool.execute(call.arguments, context)
    except asyncio.CancelledError:
        context.cancel.set()  # the exec was cancelled or timed out: tell a polling body to stop
        raise
    except PauseSignal as signal:  # calls inside the body wait: this call waits with them
        if journal is not None:
            body_paused(journal, site.key, attempt)
        return _Waiting(signal.pending)


def _call_frame(site: _Site, batch: Batch, held: int) -> Frame:
    """The frame a call runs in: its exec's, or for ``run_tools`` its caller's plus its cancel."""
    cancel = (site.cancel, asyncio.get_running_loop())
    if batch.scope is None or batch.ledger is None:
        return get_frame().replace(runtime=batch.runtime, cancel=cancel, held=held)
    return call_frame(
        batch.runtime,
        scope=batch.scope,
        ledger=batch.ledger,
        cancel=cancel,
        held=held,
        path=(*batch.turn, site.index),
        children=site.children,
        journal=batch.journal,
    )
