"""Carrying out a ``choices=`` pick: the exec's next step, held to the rules of a tool call.

A picked function runs only if a tool call of it could (``check_pick``: the
gates with this exec's policy, then approval), is charged to the run tree's
budget like a tool call (a tool call, an agentic call when it is one, and a
thread slot while a sync body runs), and runs in a frame of its own, like a
tool call's: execs inside it, or on threads it starts, nest below this exec
and stop when the exec is cancelled or times out. A value or schema option
runs no code and is none of that.

In a durable run a picked function is a call at position ``(turn, 0)`` of
the reply it was read from: its return value (the exec's output) is
journaled through its return annotation (``durable.ValueCodec``), a
recorded one comes back without the function running, a person's decision
stands in for the approval hook, and the hook may pause it like any call.
"""

from __future__ import annotations

import asyncio
import functools
import json
import threading
from functools import partial
from typing import TYPE_CHECKING, Any

from openprogram._pause import PAUSE, PendingCall
from openprogram.context import use_frame
from openprogram.durable import Journal, ValueCodec, call_print, idempotency_key
from openprogram.exceptions import DecisionError, JournalDivergence
from openprogram.messages import ToolCall
from openprogram.runtime._approval import approval_denial
from openprogram.runtime._bound import call_frame
from openprogram.runtime._effects import before_body, body_paused, unknown_outcome
from openprogram.runtime._spend import exhausted, runs_on_thread, take_call
from openprogram.runtime._waiting import PauseSignal, pause_without_store, verdict
from openprogram.stores import Step
from openprogram.structured._decision import DecisionMenu, Picked
from openprogram.tools import Tool, to_tool

if TYPE_CHECKING:
    from openprogram.runtime._run import RunState

__all__ = ["run_pick"]


async def run_pick(menu: DecisionMenu, picked: Picked, run: RunState) -> Any:
    """Run the pick of ``run``'s final reply and return its result.

    Raises:
        DecisionError: A gate or the approval hook refuses the picked function.
        BudgetExceeded: The run tree's budget allows no more calls (or thread slots) for it.
    """
    choice = picked.choice
    if choice.kind != "function":
        return await menu.run(picked, run.runtime)  # a value or schema option runs no code
    tool = choice.tool if choice.tool is not None else to_tool(choice.fn)
    path = (*run.path, run.iterations, 0)  # the pick stands for call 0 of its reply
    call = ToolCall(id=f"decision:{choice.name}", name=tool.name, arguments=dict(picked.arguments))
    journal = run.journal
    if journal is not None:
        key = f"{run.key_prefix}{run.iterations}.0"
        return await _journaled_pick(
            menu, picked, run, tool=tool, call=call, journal=journal, key=key
        )
    await check_pick(picked, tool, run)
    return await _run_picked(menu, picked, run, tool, path)


async def _journaled_pick(
    menu: DecisionMenu,
    picked: Picked,
    run: RunState,
    *,
    tool: Tool,
    call: ToolCall,
    journal: Journal,
    key: str,
) -> Any:
    """``run_pick`` in a durable run: the recorded value, or the pick run and its value queued."""
    codec = _codec(tool.fn if tool.fn is not None else tool.execute, tool.name)
    fingerprint = call_print(call.name, call.arguments)
    recorded = journal.step(key, "result")
    if recorded is not None:
        if recorded.fingerprint != fingerprint:
            raise JournalDivergence(
                f"run {journal.run_id!r} diverged from its journal at the choices= pick {key!r}: "
                f"{tool.name!r} was picked with other arguments (or another option was) than "
                "the journal recorded; run the program as it was, or start a new run",
                run_id=journal.run_id,
                path=key,
            )
        spent = run.ledger.charge_call(tool.kind == "agentic")
        if spent is not None:
            raise run.ledger.exceeded(spent)
        return codec.loads(json.dumps(json.loads(recorded.data)["value"]))
    unknown = unknown_outcome(journal, key, tool)
    if unknown is not None:
        raise DecisionError(f"option {picked.choice.name!r} was picked: {unknown}", problem=unknown)
    await check_pick(picked, tool, run, journal=journal, key=key)
    attempt = await before_body(journal, key, tool)
    try:
        value = await _run_picked(menu, picked, run, tool, (*run.path, run.iterations, 0))
    except PauseSignal:
        body_paused(journal, key, attempt)
        raise
    data = f'{{"pick":{json.dumps(picked.choice.name)},"value":{codec.dumps(value)}}}'
    journal.add(Step(key=key, kind="result", fingerprint=fingerprint, data=data))
    return value


@functools.lru_cache(maxsize=256)
def _codec(fn: Any, name: str) -> ValueCodec:
    """The codec of a picked function's value (building its pydantic adapter costs ~1 ms)."""
    return ValueCodec(fn, name)


async def _run_picked(
    menu: DecisionMenu, picked: Picked, run: RunState, tool: Tool, path: tuple[int, ...]
) -> Any:
    """Charge the pick and run it in a frame of its own (see the module docstring)."""
    threaded = runs_on_thread(tool)
    ledger = run.ledger
    spent = await take_call(
        ledger,
        threaded=threaded,
        agentic=tool.kind == "agentic",
        depth=run.scope.depth,
        max_depth=run.runtime.max_depth,
        held=run.held,
    )
    if spent is not None:
        exhausted(run, ledger, spent)
        raise ledger.exceeded(spent)
    cancel = threading.Event()
    frame = call_frame(
        run.runtime,
        scope=run.scope,
        ledger=ledger,
        cancel=(cancel, asyncio.get_running_loop()),
        held=run.held + threaded,
        path=path,
        journal=run.journal,
    )
    try:
        with use_frame(frame):
            key = None
            if run.journal is not None:
                key = idempotency_key(run.journal.run_id, f"{run.key_prefix}{run.iterations}.0")
            return await menu.run(picked, frame.runtime, idempotency_key=key)
    except asyncio.CancelledError:
        cancel.set()  # execs on other threads watch this event
        raise
    finally:
        if threaded:
            ledger.release_thread()


async def check_pick(
    picked: Picked, tool: Tool, run: RunState, *, journal: Journal | None = None, key: str = ""
) -> None:
    """A picked function runs only if a tool call of it could: through the gates, approved.

    The gates see the function's real name (not the option's label) and this
    exec's policy, which carries every enclosing exec's vetoes (law 7); the
    approval hook sees the real name too, with the label in the call id. In a
    durable run (``journal``, the pick at ``key``) a person's decision stands in
    for the hook, and the hook may pause the pick.

    Raises:
        DecisionError: A gate refuses it, or approval is refused.
        PauseSignal: The pick waits for a person.
        ConfigurationError: The hook paused it in a run without a store.
    """
    choice = picked.choice
    rejection = run.scope.vet(tool)
    if rejection is not None:
        raise DecisionError(
            f"option {choice.name!r} was picked, but {tool.name!r} is not allowed to run in this "
            f"exec: {rejection}. A picked function passes the same gates as a tool call (this "
            "exec's policy and every enclosing exec's vetoes); drop it from choices= or lift "
            "the veto",
            problem="vetoed",
        )
    call = ToolCall(id=f"decision:{choice.name}", name=tool.name, arguments=dict(picked.arguments))
    ask = partial(approval_denial, call, tool.requires_approval, run.runtime.approval)
    denial = await (verdict(call, key, journal, ask) if journal is not None else ask())
    if denial is PAUSE:
        if journal is None:
            raise pause_without_store(tool.name)
        pending = PendingCall(
            call_id=call.id, path=key, tool_name=tool.name, arguments=dict(call.arguments)
        )
        raise PauseSignal([pending])
    if denial is not None:
        raise DecisionError(
            f"option {choice.name!r} was picked, but running it was denied: {denial}",
            problem=denial,
        )
