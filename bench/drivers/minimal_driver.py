"""The hand-written minimal loop: the floor any framework's loop sits on.

What every loop must do and nothing more: ask the (fake, async) model, parse
each call's JSON arguments, run sync tools off the event loop thread
(``asyncio.to_thread``, as openprogram and the peers do) and async tools
inline, several calls concurrently, append results, repeat until text. No
validation, no events, no gating.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from ._script import Call, Script

IMPORT_TOP = "import asyncio, json"
IMPORT_LOOP = IMPORT_TOP

Message = dict[str, Any]


def tool_schema(fn: Callable[..., Any]) -> dict[str, Any]:
    """Not part of the baseline: the minimal loop derives no schemas."""
    raise NotImplementedError


def validated_call(fn: Callable[..., Any]) -> Callable[[dict[str, Any]], Awaitable[Any]]:
    """Not part of the baseline: the minimal loop validates nothing."""
    raise NotImplementedError


async def _invoke(fn: Callable[..., Any], arguments: str) -> Any:
    args = json.loads(arguments)
    if inspect.iscoroutinefunction(fn):
        return await fn(**args)
    return await asyncio.to_thread(fn, **args)


class _MinimalAgent:
    def __init__(self, tools: Sequence[Callable[..., Any]], script: Script) -> None:
        self._tools = {fn.__name__: fn for fn in tools}
        self._script = script
        self._turn = 0

    async def _model(self, messages: list[Message]) -> Message:
        reply = self._script[self._turn]
        self._turn += 1
        if isinstance(reply, str):
            return {"role": "assistant", "content": reply, "tool_calls": []}
        return {"role": "assistant", "content": "", "tool_calls": [_wire(c) for c in reply]}

    async def _run_calls(self, calls: list[Message]) -> list[Any]:
        jobs = [_invoke(self._tools[c["name"]], c["arguments"]) for c in calls]
        if len(jobs) == 1:
            return [await jobs[0]]
        return list(await asyncio.gather(*jobs))

    async def run(self) -> str:
        self._turn = 0
        messages: list[Message] = [{"role": "user", "content": "go"}]
        while True:
            reply = await self._model(messages)
            messages.append(reply)
            calls = reply["tool_calls"]
            if not calls:
                return str(reply["content"])
            results = await self._run_calls(calls)
            messages.extend(
                {"role": "tool", "tool_call_id": c["id"], "content": str(r)}
                for c, r in zip(calls, results, strict=True)
            )

    def menu_bytes(self) -> int | None:
        return None  # no schemas, so no comparable menu

    def reported_prompt_bytes(self) -> int | None:
        return None


def _wire(call: Call) -> Message:
    return {"id": f"call_{id(call)}", "name": call.name, "arguments": json.dumps(call.args)}


def make_agent(tools: Sequence[Callable[..., Any]], script: Script) -> _MinimalAgent:
    """Return the minimal loop over ``tools`` with a scripted fake model."""
    return _MinimalAgent(tools, script)
