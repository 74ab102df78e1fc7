"""ToolContext.runtime and get_current_runtime() are typed: Runtime | None, never Any."""

from __future__ import annotations

from typing import reveal_type

from pydantic import BaseModel

from openprogram import Runtime, ToolContext, function, get_current_runtime


class Verdict(BaseModel):
    ok: bool


@function(register_globally=False)
def review(text: str, ctx: ToolContext) -> bool:
    """Ask the runtime running this call, through the context."""
    reveal_type(ctx.runtime)  # R: openprogram.runtime._runtime.Runtime | None
    ctx.runtime.exec(text)  # E: union-attr
    assert ctx.runtime is not None  # None when no exec runs the call (run_tools at top level)
    reveal_type(ctx.runtime.exec(text))  # R: str
    verdict = ctx.runtime.exec(text, response_format=Verdict)
    if text:
        return verdict  # E: return-value
    return verdict.ok


@function(register_globally=False)
def summary(text: str) -> str:
    """Ask the current runtime (the enclosing exec's, or a ``with runtime:`` block's)."""
    current = get_current_runtime()
    reveal_type(current)  # R: openprogram.runtime._runtime.Runtime | None
    current.exec(text)  # E: union-attr
    if current is None:
        return text
    return current.exec(f"Summarize: {text}")


def count(text: str) -> int:
    runtime = get_current_runtime()
    assert runtime is not None
    return runtime.exec(text)  # E: return-value


def attach(ctx: ToolContext, runtime: Runtime) -> None:
    ctx.runtime = runtime
    ctx.runtime = "not a runtime"  # E: assignment
