"""Running a tool's body: awaited or on a worker thread, under the tool's timeout.

Every failure of the body becomes the call's error result, with a text the
model can act on: ``ToolError`` (the body's deliberate message), the tool's
``timeout`` expiring, any other exception (type and message). The body's own
``SystemExit`` and ``TimeoutError`` are told apart from ours (see
``BodyRaised``).

``Tool.execute`` loads this module on the first call of any tool rather than
at ``import openprogram``: it needs asyncio, which loads ``ssl``, ``socket``
and ``subprocess`` with it.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from openprogram import _threads
from openprogram._tool_types import ToolContext, ToolResult, result_text, takes_context, truncate
from openprogram.context import resolve_runtime
from openprogram.exceptions import ToolError

if TYPE_CHECKING:  # tools/_tool.py loads this module on a tool's first call
    from openprogram.schema import FunctionSchema
    from openprogram.tools import Tool

__all__ = ["BodyRaised", "failed", "run_execute", "run_function"]


async def run_function(
    tool: Tool, schema: FunctionSchema, kwargs: dict[str, Any], context: ToolContext
) -> ToolResult:
    """Call a function tool with validated keywords (runtime and context filled in)."""
    return await _outcome(tool, context, _function_value(tool, schema, kwargs, context))


async def run_execute(
    tool: Tool,
    execute: Callable[..., Any] | None,
    args: dict[str, Any],
    context: ToolContext,
) -> ToolResult:
    """Call a hand-written spec's ``execute(args)`` or ``execute(args, context)``."""
    return await _outcome(tool, context, _execute_value(tool, execute, args, context))


def failed(tool: Tool, exc: BaseException) -> ToolResult:
    """The error result of a call that raised ``exc``."""
    text = f"Tool {tool.name!r} failed: {type(exc).__name__}: {exc}"
    return ToolResult(
        content=truncate(text, tool.max_result_chars), is_error=True, error_kind="exception"
    )


async def _outcome(tool: Tool, context: ToolContext, body: Awaitable[ToolResult]) -> ToolResult:
    try:
        return await body
    except ToolError as exc:
        text = truncate(str(exc), tool.max_result_chars)
        return ToolResult(content=text, is_error=True, error_kind="tool_error")
    except BodyRaised as exc:  # the body's own SystemExit or TimeoutError
        return failed(tool, exc.error)
    except TimeoutError:  # the body's own are wrapped: this is our timeout firing
        context.cancel.set()
        return ToolResult(
            content=f"Tool {tool.name!r} timed out after {tool.timeout:g} s and was abandoned. "
            "Try simpler arguments or another approach.",
            is_error=True,
            error_kind="timeout",
        )
    except Exception as exc:  # noqa: BLE001 - any body failure becomes an error result
        return failed(tool, exc)


async def _function_value(
    tool: Tool, schema: FunctionSchema, kwargs: dict[str, Any], context: ToolContext
) -> ToolResult:
    if schema.runtime_param is not None:
        kwargs[schema.runtime_param] = context.runtime or resolve_runtime()
    if schema.context_param is not None:
        kwargs[schema.context_param] = context
    fn: Callable[..., Any] | None = tool.fn  # called with the validated keywords
    assert fn is not None  # a schema always comes from a function
    if schema.is_async:
        value = await asyncio.wait_for(_guarded_coro(fn(**kwargs)), tool.timeout)
    else:
        body = _threads.run_in_thread(_guarded(fn), **kwargs)
        value = await asyncio.wait_for(body, tool.timeout)
    return _ok(tool, value)


async def _execute_value(
    tool: Tool,
    execute: Callable[..., Any] | None,
    args: dict[str, Any],
    context: ToolContext,
) -> ToolResult:
    if execute is None:
        raise TypeError(f"tool {tool.name!r} has no execute callable")
    call_args: tuple[Any, ...] = (args, context) if takes_context(execute) else (args,)
    if inspect.iscoroutinefunction(execute):
        value = await asyncio.wait_for(_guarded_coro(execute(*call_args)), tool.timeout)
    else:
        value = await asyncio.wait_for(
            _threads.run_in_thread(_guarded(execute), *call_args), tool.timeout
        )
        if inspect.isawaitable(value):
            value = await asyncio.wait_for(_guarded_coro(value), tool.timeout)
    if isinstance(value, ToolResult):
        return replace(value, content=truncate(value.content, tool.max_result_chars))
    return _ok(tool, value)


def _ok(tool: Tool, value: Any) -> ToolResult:
    return ToolResult(content=result_text(value, tool.max_result_chars), value=value)


class BodyRaised(Exception):
    """Carries an exception the tool body raised itself past our own handling of that type.

    ``SystemExit`` (any ``argparse`` error) would end the whole program, and
    inside an asyncio task on Python 3.11 escapes the event loop; a body's own
    ``TimeoutError`` (a socket timeout, a nested exec's ``timeout_s``) would be
    mistaken for the tool's ``timeout`` expiring. Wrapped where the body runs,
    both become this tool's error result.
    """

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


def _guarded(fn: Callable[..., Any]) -> Callable[..., Any]:
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (SystemExit, TimeoutError) as exc:
            raise BodyRaised(exc) from exc

    return run


async def _guarded_coro(value: Awaitable[Any]) -> Any:
    try:
        return await value
    except (SystemExit, TimeoutError) as exc:
        raise BodyRaised(exc) from exc
