"""Carrying out a ``choices=`` pick: the exec's next step, held to the rules of a tool call.

A picked function runs only if a tool call of it could (``check_pick``: the
gates with this exec's policy, then approval), is charged to the run tree's
budget like a tool call (a tool call, an agentic call when it is one, and a
thread slot while a sync body runs), and runs in a frame of its own, like a
tool call's: execs inside it, or on threads it starts, nest below this exec
and stop when the exec is cancelled or times out. A value or schema option
runs no code and is none of that.
"""

from __future__ import annotations

import asyncio
import threading
from typing import TYPE_CHECKING, Any

from openprogram.context import use_frame
from openprogram.exceptions import DecisionError
from openprogram.messages import ToolCall
from openprogram.runtime._approval import approval_denial
from openprogram.runtime._bound import call_frame
from openprogram.runtime._spend import exhausted, runs_on_thread, take_call
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
    await check_pick(picked, tool, run)
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
        path=(*run.path, run.iterations, 0),  # the pick stands for call 0 of its reply
    )
    try:
        with use_frame(frame):
            return await menu.run(picked, frame.runtime)
    except asyncio.CancelledError:
        cancel.set()  # execs on other threads watch this event
        raise
    finally:
        if threaded:
            ledger.release_thread()


async def check_pick(picked: Picked, tool: Tool, run: RunState) -> None:
    """A picked function runs only if a tool call of it could: through the gates, approved.

    The gates see the function's real name (not the option's label) and this
    exec's policy, which carries every enclosing exec's vetoes (law 7); the
    approval hook sees the real name too, with the label in the call id.

    Raises:
        DecisionError: A gate refuses it, or approval is refused.
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
    denial = await approval_denial(call, tool.requires_approval, run.runtime.approval)
    if denial is not None:
        raise DecisionError(
            f"option {choice.name!r} was picked, but running it was denied: {denial}",
            problem=denial,
        )
