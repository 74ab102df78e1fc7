"""Replay through the live path: a model turn or a call asks the journal first.

A durable run run again takes each finished step from its journal: the loop's
``request_reply`` builds the request exactly as a live turn does, and
``recorded_reply`` answers it from the journal when the turn was recorded for
that very request (the same fingerprint), or raises ``JournalDivergence``
saying what differs; a turn not recorded goes to the provider and
``record_reply`` queues its reply. The executor does the same for a call
(``recorded_result`` / ``record_result``): a recorded result comes back
without the body running, after a check that the call is the one recorded.
Replayed steps emit their events with ``replayed=True`` and are charged to
the budget like live ones.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from openprogram.durable import (
    Journal,
    Requests,
    call_print,
    explain,
    read_reply,
    read_result,
)
from openprogram.events import (
    ToolCallCompleted,
    ToolCallFailed,
    ToolCallSkipped,
    ToolCallStarted,
    digest,
    size_bytes,
)
from openprogram.exceptions import JournalDivergence
from openprogram.messages import AssistantMessage, ToolCall, ToolResultMessage
from openprogram.providers.base import ProviderRequest
from openprogram.runtime._run import Emitter, RunState
from openprogram.runtime._stream import StreamToolResult
from openprogram.tools import Tool

if TYPE_CHECKING:
    from openprogram.runtime._budget import Ledger

__all__ = [
    "SKIPPED",
    "UNCHARGED",
    "divergence",
    "record_reply",
    "record_result",
    "recorded_reply",
    "recorded_result",
]

UNCHARGED = frozenset({"not_in_menu", "malformed_arguments", "depth", "denied", "budget"})
"""Failures of calls refused before the budget was charged (a replay charges none either)."""

SKIPPED = "skipped:"
"""Prefix of the failure recorded for a call answered without running (then its reason)."""


def recorded_reply(
    run: RunState, journal: Journal, request: ProviderRequest
) -> AssistantMessage | None:
    """The journal's reply to ``run``'s current turn, or ``None`` when the turn is new.

    Raises:
        JournalDivergence: The turn was recorded for another request.
    """
    if run.requests is None:
        run.requests = Requests()
    key = f"{run.key_prefix}{run.iterations}"
    fingerprint = run.requests.fingerprint(request, run.stepped)
    run.turn = (key, fingerprint)
    step = journal.step(key, "reply") if journal.recorded else None
    if step is None:
        return None
    if step.fingerprint != fingerprint.value:
        raise divergence(run, journal, key, request)
    reply, _ = read_reply(step)
    run.head = fingerprint.head_digest
    run.stepped[id(reply)] = key
    return reply


def record_reply(run: RunState, journal: Journal, reply: AssistantMessage) -> None:
    """Queue the live reply to ``run``'s current turn (after ``recorded_reply`` found none)."""
    assert run.turn is not None  # recorded_reply ran for this turn
    key, fingerprint = run.turn
    head_changed = fingerprint.head_digest != run.head
    run.head = fingerprint.head_digest
    run.stepped[id(reply)] = key
    journal.reply(key, fingerprint, reply, head_changed)


def divergence(
    run: RunState, journal: Journal, key: str, request: ProviderRequest
) -> JournalDivergence:
    """The error of a turn recorded for another request, saying what differs."""
    assert run.requests is not None
    assert run.turn is not None
    fingerprint = run.turn[1]
    head: Mapping[str, Any] | None = None
    digests: list[str] = []
    for turn in range(1, run.iterations + 1):
        step = journal.step(f"{run.key_prefix}{turn}", "reply")
        if step is None:
            break
        _, data = read_reply(step)
        digests.extend(data.get("new", ()))
        head = data.get("head", head)
    what = explain(head, digests, fingerprint, run.requests.digests, request.messages)
    return JournalDivergence(
        f"run {journal.run_id!r} diverged from its journal at model turn {key!r}: {what}. "
        "The program (its content, options, tools or code) changed since the run was "
        "journaled; run it as it was, or start a new run (another run_id)",
        run_id=journal.run_id,
        path=key,
    )


def recorded_result(
    call: ToolCall,
    key: str,
    *,
    journal: Journal,
    emitter: Emitter,
    ledger: Ledger | None,
    tool: Tool | None,
    canonical: str,
) -> tuple[ToolResultMessage, str | None] | None:
    """The journal's result of the call at ``key``, its events emitted as replayed, or ``None``.

    Returns:
        The result and its failure kind (``None``: a success), or ``None`` when the call
        has no recorded result.

    Raises:
        JournalDivergence: Another call (tool or arguments) was recorded at ``key``.
        BudgetExceeded: The run tree's budget no longer allows the call.
    """
    step = journal.step(key, "result")
    if step is None:
        return None
    if step.fingerprint != call_print(call.name, call.arguments, canonical):
        raise JournalDivergence(
            f"run {journal.run_id!r} diverged from its journal at call {key!r}: tool "
            f"{call.name!r} was called with other arguments (or another tool was) than the "
            "journal recorded there; run the program as it was, or start a new run",
            run_id=journal.run_id,
            path=key,
        )
    message, failure = read_result(step, call)
    skipped = failure[len(SKIPPED) :] if failure and failure.startswith(SKIPPED) else None
    if ledger is not None and skipped is None and failure not in UNCHARGED:
        spent = ledger.charge_call(tool is not None and tool.kind == "agentic")
        if spent is not None:
            raise ledger.exceeded(spent)
    schema_hash = digest(tool.parameters) if tool is not None else None
    _replayed_events(
        call, emitter, message=message, failure=failure, skipped=skipped, schema_hash=schema_hash
    )
    return message, failure


def record_result(
    call: ToolCall,
    key: str,
    journal: Journal,
    message: ToolResultMessage,
    *,
    failure: str | None,
    canonical: str,
) -> None:
    """Queue the result of the call at ``key`` (``failure``: its kind, for an error;
    ``canonical``: its arguments as JSON with sorted keys)."""
    journal.result(key, call, canonical, message, failure)


def _replayed_events(
    call: ToolCall,
    emitter: Emitter,
    *,
    message: ToolResultMessage,
    failure: str | None,
    skipped: str | None,
    schema_hash: str | None,
) -> None:
    text = message.content
    payload = text if emitter.trace_payloads else None
    if skipped is not None:
        emitter.emit(
            ToolCallSkipped, tool_name=call.name, call_id=call.id, reason=skipped, replayed=True
        )
    else:
        arguments = json.dumps(call.arguments, sort_keys=True, default=str)
        emitter.emit(
            ToolCallStarted,
            tool_name=call.name,
            call_id=call.id,
            input_schema_hash=schema_hash,
            arguments_hash=digest(arguments),
            arguments_size_bytes=size_bytes(arguments),
            arguments=call.arguments if emitter.trace_payloads else None,
            replayed=True,
        )
        if failure is None:
            emitter.emit(
                ToolCallCompleted,
                tool_name=call.name,
                call_id=call.id,
                duration_ms=0.0,
                output_size_bytes=size_bytes(text),
                output_hash=digest(text),
                output=payload,
                replayed=True,
            )
        else:
            emitter.emit(
                ToolCallFailed,
                tool_name=call.name,
                call_id=call.id,
                failure=failure,
                duration_ms=0.0,
                error_size_bytes=size_bytes(text),
                error=payload,
                replayed=True,
            )
    emitter.stream(StreamToolResult, result=message)
