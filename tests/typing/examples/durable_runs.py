"""Durable runs: run_id, an approval hook that pauses, resume, and what a pause says."""

from __future__ import annotations

from typing import reveal_type

from openprogram import (
    PAUSE,
    JournalDivergence,
    Pause,
    PendingCall,
    RunPaused,
    Runtime,
    ToolCall,
    ToolContext,
    function,
)
from openprogram.stores import RunStore, SQLiteStore


def approval(call: ToolCall) -> str | Pause | None:
    return PAUSE if call.name == "refund" else None


@function(effect="side_effect")
def refund(order: str, ctx: ToolContext) -> str:
    """Refund an order."""
    reveal_type(ctx.idempotency_key)  # R: str | None
    return order


store = SQLiteStore("/tmp/runs.sqlite")
runs: RunStore = store
runtime = Runtime("openai:gpt-4o-mini", store=store, approval=approval)
reveal_type(runtime.exec("Refund A", tools=[refund], run_id="r1"))  # R: str
try:
    runtime.exec("Refund A", run_id=7)  # E: arg-type
except RunPaused as paused:
    reveal_type(paused.run_id)  # R: str
    reveal_type(paused.pending)  # R: tuple[openprogram._pause.PendingCall, ...]
    first: PendingCall = paused.pending[0]
    reveal_type(first.path)  # R: str
    runtime.resume(paused.run_id, approve=[first.call_id], deny={"call_2": "no"})
except JournalDivergence as diverged:
    reveal_type(diverged.path)  # R: str
function(lambda x: x, effect="maybe")  # E: call-overload


async def later(rt: Runtime) -> object:
    return await rt.async_resume("r1", approve=["call_1"])
