"""runtime.tree(), AgenticFunction.run/arun, Tree.call and streams: typed as the call is."""

from __future__ import annotations

import asyncio
from typing import reveal_type

from openprogram import Budget, Conversation, Runtime, agentic_function
from openprogram.runtime import StreamFinal, StreamTextDelta

runtime = Runtime("openai:gpt-4o-mini", budget=Budget(model_calls=20))


@agentic_function
def plan_trip(city: str, runtime: Runtime) -> str:
    """Plan a weekend."""
    return runtime.exec(f"Plan a weekend in {city}.")


@agentic_function
async def research(topic: str, days: int, runtime: Runtime) -> list[str]:
    """Research a topic."""
    return await runtime.async_exec(f"Research {topic} for {days} days.", response_format=list[str])


def pipeline(text: str, rounds: int) -> int:
    return rounds


async def apipeline(text: str) -> float:
    return 1.0


with runtime.tree(budget=Budget(model_calls=6)) as tree:
    reveal_type(tree)  # R: openprogram.runtime._tree.Tree
    trip = plan_trip.run("Paris")
reveal_type(tree.result)  # R: openprogram.runtime._tree.TreeResult[None]
reveal_type(trip)  # R: openprogram.runtime._tree.TreeResult[str]
reveal_type(trip.output)  # R: str
reveal_type(trip.runs)  # R: tuple[openprogram.runtime._result.RunResult, ...]
reveal_type(research.run("tides", 2))  # R: openprogram.runtime._tree.TreeResult[list[str]]  # fmt: skip
reveal_type(plan_trip.run("Rome", runtime=runtime))  # R: openprogram.runtime._tree.TreeResult[str]  # fmt: skip
plan_trip.run(42)  # E: call-overload
research.run("tides")  # E: call-overload
reveal_type(runtime.tree().call(pipeline, "text", 2))  # R: openprogram.runtime._tree.TreeResult[int]  # fmt: skip
reveal_type(runtime.tree().call(apipeline, "text"))  # R: openprogram.runtime._tree.TreeResult[float]  # fmt: skip
runtime.tree().call(pipeline, "text")  # E: call-overload
runtime.tree(budget=6)  # E: arg-type


async def fan_out(cities: list[str]) -> list[str]:
    async with runtime.tree(budget=Budget(model_calls=6)) as fan:
        trips = await asyncio.gather(*(plan_trip.arun(city) for city in cities))
        found = await research.arun("tides", 3)
    reveal_type(trips)  # R: list[openprogram.runtime._tree.TreeResult[str]]
    reveal_type(found.output)  # R: list[str]
    reveal_type(fan.result.budget_usage.model_calls)  # R: int
    reveal_type(await runtime.tree().acall(pipeline, "text", 1))  # R: openprogram.runtime._tree.TreeResult[int]  # fmt: skip
    return [trip.output for trip in trips]


async def watch(chat: Conversation) -> str:
    text = ""
    async for event in chat.stream("Hello", max_iterations=3):
        if isinstance(event, StreamTextDelta) and event.depth == 1:
            text += event.text
        if isinstance(event, StreamFinal):
            reveal_type(event.depth)  # R: int
            return text
    return text
