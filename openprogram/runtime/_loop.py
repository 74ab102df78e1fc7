"""The tool loop (``run_loop``), one function per step.

1. ``request_reply``: request → provider → one ``AssistantMessage``;
2. ``stopped``: ``stop_reason`` ``error`` raises ``LLMError``, ``aborted`` ends the run
   (with ``choices`` or ``response_format`` it raises: a partial reply is no answer);
3. no ``ToolCall`` → ``finish``: its text is the result (unless steering or a
   follow-up is queued, which starts another round); with ``choices`` or
   ``response_format``, ``conclude`` turns the final reply (or a call of the
   hidden submit tool) into the output, or earns it one re-ask/repair turn;
4. ``execute_calls``: run the calls, append one ``ToolResultMessage`` per call, go to 1.

Before every model call, queued steering messages are delivered
(``deliver_steering``). The number of model calls is capped by
``ExecOptions.cap``; when the loop needs one more, ``at_cap`` applies
``on_max_iterations``.
"""

from __future__ import annotations

import time
from typing import Any

from openprogram.events import (
    AgentResponseReceived,
    MaxIterationsReached,
    ProviderResponseReceived,
    TokensConsumed,
    digest,
    size_bytes,
)
from openprogram.exceptions import LLMError, MaxIterationsExceeded
from openprogram.messages import AssistantMessage, ToolCall
from openprogram.providers.base import ProviderRequest, ToolChoice
from openprogram.runtime._call_ids import unique_call_ids
from openprogram.runtime._choice import decide
from openprogram.runtime._executor import Batch, run_batch, skip_calls
from openprogram.runtime._finale import Again
from openprogram.runtime._provider_call import consume, provider_error
from openprogram.runtime._replay import record_reply, recorded_reply
from openprogram.runtime._run import RunState
from openprogram.runtime._spend import charge_model_call, charge_reply
from openprogram.runtime._stream import StreamToolCall

__all__ = ["run_loop"]

_CAP_SKIP = "Not run: this exec reached its limit of model calls (max_iterations)."


async def run_loop(run: RunState) -> Any:
    """Drive the run until a final answer, a stop, or the iteration cap; return the output."""
    forced: ToolChoice | None = None  # what a repair turn forces for its one call
    while True:
        if run.iterations >= run.options.cap:
            return await at_cap(run)
        deliver_steering(run)
        reply = await request_reply(run, forced=forced)
        forced = None
        if stopped(run, reply):
            return run.output
        submitted = run.finale.submissions(reply) if run.finale is not None else []
        if reply.tool_calls and not submitted:
            await execute_calls(run, reply.tool_calls)
            continue
        if not submitted and wants_another_round(run, reply):
            continue
        step = await conclude(run, reply, submitted)
        if not isinstance(step, Again):
            return step
        run.messages.extend(step.messages)  # the one re-ask or repair turn
        forced = step.tool_choice


def deliver_steering(run: RunState) -> None:
    """Append queued steering messages, so the next model call sees them (top-level runs only)."""
    if run.parent is None:
        run.messages.extend(run.runtime.take_steering())


async def request_reply(
    run: RunState, *, forced: ToolChoice | None = None, finishing: bool = False
) -> AssistantMessage:
    """Step 1: one model call; returns the reply, already appended to the conversation.

    What the request offers (tools, ``tool_choice``, parallel calls) is decided
    by ``_choice.decide``, from ``forced`` (a repair turn's choice) and
    ``finishing`` (``on_max_iterations="finish"``'s extra call). In a durable
    run the journal answers a recorded turn (``_replay``): the same request,
    no provider call, its events marked replayed.
    """
    run.iterations += 1
    run.step_id = f"s{run.iterations}"
    shape = decide(run, forced=forced, low=charge_model_call(run), finishing=finishing)
    run.withdrawn = shape.withdrawn  # a reply that ignores "none" gets its calls answered
    finale = run.finale
    request = ProviderRequest(
        model=run.model,
        system=run.request_system(),
        messages=tuple(run.messages),
        tools=shape.tools,
        tool_choice=shape.tool_choice,
        parallel_tool_calls=shape.parallel_tool_calls,
        response_format=finale.response_format if finale is not None else None,
        answer_schema=finale.answer_schema if finale is not None else None,
        deadline=run.deadline,
        max_retries=run.runtime.max_retries,
        **_sampling(run),
    )
    journal = run.journal
    if journal is not None and (recorded := recorded_reply(run, journal, request)) is not None:
        run.call_ids.update(call.id for call in recorded.tool_calls)
        return _received(run, recorded, None, 0.0, replayed=True)
    started = time.monotonic()
    run.attempt = 1
    run.answering = (run.provider.name, run.model)
    message, sent_at = await consume(run, run.provider.stream(request), time.monotonic)
    reply = unique_call_ids(message, run.call_ids)
    if journal is not None:
        record_reply(run, journal, reply)
    return _received(run, reply, sent_at, started, replayed=False)


def _received(
    run: RunState, reply: AssistantMessage, sent_at: float | None, started: float, *, replayed: bool
) -> AssistantMessage:
    """Append the reply, charge it, and emit its events."""
    run.messages.append(reply)
    now = time.monotonic()
    charge_reply(run, reply.usage, 0.0 if replayed else now - started)
    usage = reply.usage
    provider_id, model_id = run.answering
    run.emit(
        ProviderResponseReceived,
        provider_id=provider_id,
        model_id=reply.model or model_id,
        tokens={
            "input": usage.input_tokens,
            "output": usage.output_tokens,
            "total": usage.total_tokens,
        },
        # From the first request on the wire: what a provider does before sending (the
        # local model starting its server) is not the model's latency, and a live view
        # timing the wait from ProviderRequestSent then shows the same figure.
        latency_ms=0.0 if replayed else (now - (sent_at or started)) * 1000,
        stop_reason=reply.stop_reason,
        tool_calls=len(reply.tool_calls),
        replayed=replayed,
    )
    run.emit(
        TokensConsumed,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        total_tokens=usage.total_tokens,
        cached_tokens=usage.cached_tokens,
        replayed=replayed,
    )
    return reply


def _sampling(run: RunState) -> dict[str, Any]:
    """``temperature``, ``max_tokens``, ``seed``: the exec's, else the runtime's (else None)."""
    options, runtime = run.options, run.runtime
    temperature, max_tokens, seed = options.temperature, options.max_tokens, options.seed
    return {
        "temperature": temperature if temperature is not None else runtime.temperature,
        "max_tokens": max_tokens if max_tokens is not None else runtime.max_tokens,
        "seed": seed if seed is not None else runtime.seed,
    }


def stopped(run: RunState, reply: AssistantMessage) -> bool:
    """Step 2: ``error`` raises ``LLMError``; ``aborted`` ends the run with the text so far.

    With ``choices``/``response_format`` an aborted reply raises instead
    (``Finale.aborted``): the exec's result is typed, and the text so far is not it.
    Either way none of its tool calls (a pick or a submission included) runs.
    """
    if reply.stop_reason == "aborted":
        run.stop_reason = "aborted"
        if run.finale is not None:
            raise run.finale.aborted(reply)
        run.output = reply.text
        return True
    if reply.stop_reason == "error":
        provider_id, model_id = run.answering
        error = LLMError(
            reply.error or "the provider reported an error without details",
            reason="server",
            provider=provider_id,
            model=reply.model or model_id,
            attempts=run.attempt,  # earlier attempts of this call may have been retried
        )
        provider_error(run, error, retrying=False, attempt=run.attempt)
        raise error
    return False


async def execute_calls(run: RunState, calls: list[ToolCall]) -> None:
    """Step 4: run the calls, each in a frame of this exec; append one result per call."""
    scope, runtime = run.scope, run.runtime
    if run.streaming:
        for call in calls:
            run.stream(StreamToolCall, call=call)
    if run.withdrawn is not None:  # the request allowed no calls: one result each, none run
        run.messages.extend(skip_calls(calls, run, "tools_withdrawn", run.withdrawn))
        return
    menu = scope.menu.core
    batch = Batch(
        tools=menu.tools,
        emitter=run,
        runtime=runtime,
        deps=runtime.deps,
        approval=runtime.approval,
        sequential=not run.options.parallel_tool_calls,
        deferred=menu.deferred_names,
        schema_hashes=menu.schema_hashes,
        depth_limit=runtime.max_depth if scope.depth >= runtime.max_depth else None,
        interrupted=runtime.steering_pending if run.parent is None else None,
        failures=run.failures,
        scope=scope,
        ledger=run.ledger,
        depth=scope.depth,
        max_depth=runtime.max_depth,
        held=run.held,
        turn=(*run.path, run.iterations),
        journal=run.journal,
        turn_key=f"{run.key_prefix}{run.iterations}",
    )
    results = await run_batch(calls, batch)
    if run.journal is not None:  # each result is its call's journaled step
        turn = batch.turn_key
        run.stepped.update((id(r), f"{turn}.{k}") for k, r in enumerate(results))
    run.messages.extend(results)


def wants_another_round(run: RunState, reply: AssistantMessage) -> bool:
    """After a text answer: queued steering or follow-ups start another round.

    Both are the user's messages to the top-level conversation, so runs nested in
    tool bodies neither take nor wait for them.
    """
    _answered(run, reply)
    if run.parent is not None:
        return False
    if run.runtime.steering_pending():
        return True  # delivered at the top of the next round
    follow_ups = run.runtime.take_follow_ups()
    run.messages.extend(follow_ups)
    return bool(follow_ups)


def _answered(run: RunState, reply: AssistantMessage) -> None:
    text = reply.text
    run.emit(
        AgentResponseReceived,
        text_hash=digest(text),
        text_size_bytes=size_bytes(text),
        text=text if run.trace_payloads else None,
    )


def finish(run: RunState, reply: AssistantMessage) -> Any:
    """Step 3: the text answer is the output."""
    run.stop_reason = reply.stop_reason if reply.stop_reason != "tool_calls" else "stop"
    run.output = reply.text
    return run.output


async def conclude(run: RunState, reply: AssistantMessage, submitted: list[ToolCall]) -> Any:
    """Step 3 with ``choices``/``response_format``: the final reply becomes the output.

    Other calls of a reply that submits the structured answer run first (the
    submit tool itself never runs). Returns the output, or ``Again`` when the
    reply earns its one re-ask or repair turn.
    """
    if run.finale is None:
        return finish(run, reply)
    others = [c for c in reply.tool_calls if c not in submitted]
    if others:
        await execute_calls(run, others)
    step = await run.finale.conclude(reply, run)
    if not isinstance(step, Again):
        run.stop_reason = "stop"
        run.output = step
    return step


async def at_cap(run: RunState) -> Any:
    """The loop needs another model call but the cap is reached: apply ``on_max_iterations``."""
    action = run.options.on_max_iterations
    run.emit(
        MaxIterationsReached,
        iterations=run.iterations,
        max_iterations=run.options.cap,
        action=action,
    )
    run.stop_reason = "max_iterations"
    if action == "raise":
        raise MaxIterationsExceeded(
            f"exec made {run.iterations} model calls (max_iterations={run.options.max_iterations}, "
            f"effective cap {run.options.cap}, at most 50) and the model still wanted to go on; "
            "raise max_iterations, or pass on_max_iterations='return' or 'finish'"
        )
    if action == "finish":
        deliver_steering(run)
        reply = await request_reply(run, finishing=True)
        if stopped(run, reply):
            return run.output
        submitted = run.finale.submissions(reply) if run.finale is not None else []
        others = [c for c in reply.tool_calls if c not in submitted]
        # A provider that ignores tool_choice="none" still gets one result per call.
        run.messages.extend(skip_calls(others, run, "max_iterations", _CAP_SKIP))
        _answered(run, reply)
        return await _output_at_cap(run, reply)
    return await _output_at_cap(run, _last_reply(run))


async def _output_at_cap(run: RunState, reply: AssistantMessage | None) -> Any:
    """The reply's text; with ``choices``/``response_format``, its verdict with no turn left."""
    if run.finale is not None and reply is not None:
        run.finale.last_chance()
        run.output = await run.finale.conclude(reply, run)
    else:
        run.output = reply.text if reply is not None else ""
    run.stop_reason = "max_iterations"
    return run.output


def _last_reply(run: RunState) -> AssistantMessage | None:
    for message in reversed(run.messages):
        if isinstance(message, AssistantMessage):
            return message
    return None
