"""One exec from start to end: its run state, deadline, opening and closing events.

``Runtime.exec``, ``async_exec`` and ``stream`` parse their options and hand
over here; ``run_exec`` builds the ``RunState`` (scope, finale, deadline),
emits ``AgentInvoked``, drives the loop under the deadline and the budget (a
top-level exec with a store as a durable run: ``_durable``), and always emits
``AgentEnd`` and records ``Runtime.last_run`` (and the record of the
``runtime.tree()`` block it runs in, if any), however the exec ends.
``stream_exec`` runs the same exec with a queue as one more sink.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, Callable, Sequence
from typing import TYPE_CHECKING, Any

from openprogram.context import Frame, get_current_frame
from openprogram.events import AgentEnd, AgentInvoked, digest, size_bytes
from openprogram.exceptions import BudgetExceeded, RunPaused, UserError
from openprogram.messages import AssistantMessage, UserMessage, user_content
from openprogram.runtime._bound import exec_depth, exec_parent, origin_of
from openprogram.runtime._budget import Ledger
from openprogram.runtime._cancel import cancelled_with_caller
from openprogram.runtime._durable import join_tree, run_durably, run_store
from openprogram.runtime._finale import Finale, with_instructions
from openprogram.runtime._loop import run_loop
from openprogram.runtime._options import ExecOptions
from openprogram.runtime._result import RunResult
from openprogram.runtime._run import RunState, Sink
from openprogram.runtime._scope import build_scope, check_forced_choice
from openprogram.runtime._spend import budget_timeout, close_budget, open_budget
from openprogram.runtime._stream import StreamEvent, StreamFinal, stream_events
from openprogram.runtime._tree import joined_ledger, joined_tree
from openprogram.runtime._waiting import PauseSignal
from openprogram.stores import RunStore

if TYPE_CHECKING:
    from openprogram.runtime._runtime import Runtime

__all__ = ["run_exec", "stream_exec"]


def stream_exec(
    runtime: Runtime, content: Any, options: ExecOptions
) -> AsyncGenerator[StreamEvent, None]:
    """Run one exec and yield its stream events; closing the generator cancels the exec."""
    return stream_events(
        lambda sink: run_exec(runtime, content, options, (sink,)), lambda: exec_depth(runtime)
    )


async def run_exec(
    runtime: Runtime,
    content: Any,
    options: ExecOptions,
    sinks: Sequence[Sink],
    recorded: Callable[[RunResult], object] | None = None,
) -> Any:
    """Run one exec of ``runtime`` (or of the runtime a bound view shows) and return its output.

    ``recorded`` receives the run's own record when it ends, however it ends
    (``runtime.last_run`` is whichever exec of the runtime ended last).
    """
    parent = exec_parent(runtime)  # first, before any await: it numbers this exec (its path)
    path = (*parent.path, parent.children()) if parent.children is not None else ()
    recorded = joined_tree(parent, path, recorded)  # the tree block it starts in, if any
    runtime = origin_of(runtime)
    message = user_content(content)
    up = parent.scope
    if up is not None and up.depth >= runtime.max_depth:
        raise UserError(
            f"exec refused: the nesting depth limit (max_depth={runtime.max_depth}) is reached; "
            "an exec inside a tool body nests one level deeper — raise Runtime(max_depth=...)"
        )
    store = run_store(runtime, options, parent)
    run = RunState(
        runtime=runtime,
        provider=runtime.provider,
        options=options,
        parent=up.run if up is not None else None,
        sinks=(*sinks, runtime.on_stream) if runtime.on_stream is not None else sinks,
        system=_system_prompt(runtime),
        deadline=_deadline(options.timeout_s, up.run.deadline if up is not None else None),
    )
    run.path, run.held = path, parent.held
    if store is not None:
        run.run_id = options.run_id or run.run_id
    else:
        join_tree(run, parent)
    run.ledger = _ledger(runtime, options, parent)
    run.scope = build_scope(runtime=runtime, options=options, parent=up, run=run)
    run.deadline = _earliest(run.deadline, run.ledger.deadline_of_tree)
    check_forced_choice(options.forced_name, run.scope.menu, options.tool_choice)
    core = run.scope.menu.core
    run.finale = Finale.of(options, run.provider, (*core.names, *core.deferred_names))
    asked, message = message, with_instructions(message, run.finale)
    if options.history:
        run.messages.extend(options.history)
        for earlier in options.history:  # new calls get ids the history does not use
            if isinstance(earlier, AssistantMessage):
                run.call_ids.update(call.id for call in earlier.tool_calls)
    run.messages.append(message)
    _invoked(runtime, run, message)
    finished = cancelled = False
    try:
        open_budget(run)
        output = await _drive(run, parent, store, asked)
        finished = True
        return output
    except BudgetExceeded:
        run.stop_reason = "budget"
        raise
    except asyncio.CancelledError:
        cancelled = True
        raise
    finally:
        close_budget(run)
        _ended(runtime, run, finished, recorded)
        # Observers have seen every event when exec returns, unless that would overrun
        # the deadline or delay a cancellation (then the delivery thread finishes alone).
        await run.delivered(time.monotonic() if cancelled else run.deadline)


def _ledger(runtime: Runtime, options: ExecOptions, parent: Frame) -> Ledger:
    """The budget a new exec charges: a new tree's, or the one it joins, tightened by its own."""
    joined = joined_ledger(runtime, parent)
    if joined is None:
        return Ledger.open(runtime.budget, options.budget)
    return joined.narrow(options.budget)


async def _drive(run: RunState, parent: Frame, store: RunStore | None, asked: UserMessage) -> Any:
    # An exec nested in a call on another event loop stops when that call is cancelled.
    if run.deadline is None:
        async with cancelled_with_caller(parent.cancel):
            return await _loop_with_status(run, store, asked)
    timeout = asyncio.timeout_at(_loop_time(run.deadline))
    try:
        async with timeout, cancelled_with_caller(parent.cancel):
            return await _loop_with_status(run, store, asked)
    except TimeoutError:
        if not timeout.expired():
            raise
        run.stop_reason = "timeout"
        if (spent := budget_timeout(run)) is not None:
            raise spent from None
        raise TimeoutError(
            f"exec timed out: it did not finish within its deadline (timeout_s="
            f"{run.options.timeout_s}, or an enclosing exec's) after {run.iterations} model "
            "call(s); raise timeout_s, or make the tools or the task smaller"
        ) from None


async def _loop_with_status(run: RunState, store: RunStore | None, asked: UserMessage) -> Any:
    try:
        if store is not None:
            return await run_durably(run, store, asked, run_loop)
        return await run_loop(run)
    except asyncio.CancelledError:
        run.stop_reason = "aborted"
        raise
    except (PauseSignal, RunPaused):
        run.stop_reason = "paused"
        raise
    except BaseException:
        if run.stop_reason == "stop":  # keep "max_iterations" of on_max_iterations="raise"
            run.stop_reason = "error"
        raise


def _invoked(runtime: Runtime, run: RunState, message: UserMessage) -> None:
    text = message.text
    run.emit(
        AgentInvoked,
        provider_id=run.provider.name,
        model_id=run.model,
        depth=run.scope.depth,
        content_hash=digest(text),
        content_size_bytes=size_bytes(text),
        content=text if runtime.trace_payloads else None,
    )
    run.tools_resolved(run.scope.menu)


def _ended(
    runtime: Runtime,
    run: RunState,
    finished: bool,
    recorded: Callable[[RunResult], object] | None,
) -> None:
    run.emit(
        AgentEnd,
        stop_reason=run.stop_reason,
        iterations=run.iterations,
        duration_ms=(time.monotonic() - run.started) * 1000,
        input_tokens=run.usage.input_tokens,
        output_tokens=run.usage.output_tokens,
    )
    result = run.result()
    runtime.last_run = result
    if recorded is not None:
        recorded(result)
    if finished:
        run.stream(StreamFinal, output=run.output, result=result)


def _system_prompt(runtime: Runtime) -> str | None:
    frame = get_current_frame()
    if frame is not None and frame.system is not None:
        return frame.system  # the agentic function's own prompt beats the runtime default
    return runtime.system


def _deadline(timeout_s: float | None, inherited: float | None) -> float | None:
    own = time.monotonic() + timeout_s if timeout_s is not None else None
    if own is None or inherited is None:
        return own if own is not None else inherited
    return min(own, inherited)


def _earliest(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else min(a, b)


def _loop_time(deadline: float) -> float:
    """Convert a ``time.monotonic()`` deadline to the running loop's clock."""
    loop = asyncio.get_running_loop()
    return loop.time() + (deadline - time.monotonic())
