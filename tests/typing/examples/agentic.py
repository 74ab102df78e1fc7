"""@agentic_function keeps the signature minus the injected runtime."""

from __future__ import annotations

import asyncio
from typing import reveal_type

from openprogram import AgenticFunction, Runtime, agentic_function


@agentic_function
def plan_trip(destination: str, runtime: Runtime) -> str:
    """Plan a trip."""
    return runtime.exec(f"Plan a trip to {destination}.")


@agentic_function(system="You are terse.", register_globally=False)
def compare(city: str, other: str, days: int, runtime: Runtime | None = None) -> str:
    """Compare two cities."""
    assert runtime is not None
    return runtime.exec(f"Compare {city} and {other} over {days} days.")


@agentic_function(register_globally=False)
def itinerary(city: str, days: int = 3, runtime: Runtime | None = None) -> str:
    """An optional runtime: the whole signature stays, names and defaults included."""
    assert runtime is not None
    return runtime.exec(f"{days} days in {city}")


@agentic_function(as_tool=False)
def runtime_first(runtime: Runtime | None, topic: str, *, depth: int = 1) -> str:
    """A leading runtime stays visible: positional arguments fill it first."""
    assert runtime is not None
    return runtime.exec(topic)


@agentic_function
def no_runtime(n: int) -> list[int]:
    """No runtime parameter: the whole signature is kept."""
    return list(range(n))


@agentic_function(register_globally=False)
async def answer(question: str, runtime: Runtime) -> str:
    """Async: calling it gives the coroutine."""
    return await runtime.async_exec(question)


class Planner:
    @agentic_function
    def itinerary(self, city: str, runtime: Runtime) -> str:
        """A method: self and runtime are both hidden from callers."""
        return runtime.exec(city)


reveal_type(plan_trip)  # R: openprogram.decorators._agentic.AgenticFunction[[str], str]
reveal_type(plan_trip("Paris"))  # R: str
plan_trip(42)  # E: call-overload
plan_trip()  # E: call-overload
reveal_type(plan_trip("Paris", runtime=Runtime("openai:gpt-4o-mini")))  # R: str
reveal_type(compare("Paris", "Rome", 3))  # R: str
compare("Paris", "Rome", "three")  # E: call-overload
reveal_type(itinerary)  # R: openprogram.decorators._agentic.AgenticFunction[[city: str, days: int =, runtime: openprogram.runtime._runtime.Runtime | None =], str]  # fmt: skip
reveal_type(itinerary("Paris"))  # R: str
reveal_type(itinerary(city="Paris", days=2, runtime=None))  # R: str
itinerary("Paris", "two")  # E: call-overload
reveal_type(runtime_first(None, "tides", depth=2))  # R: str
runtime_first("tides")  # E: call-overload
reveal_type(no_runtime(3))  # R: list[int]
reveal_type(no_runtime(n=3))  # R: list[int]
pending = answer("why?")
reveal_type(pending).close()  # R: typing.Coroutine[Any, Any, str]
reveal_type(asyncio.run(pending))  # R: str
reveal_type(Planner().itinerary("Oslo"))  # R: str
Planner().itinerary(1)  # E: call-overload
reveal_type(plan_trip.tool("Paris"))  # R: str
reveal_type(plan_trip.spec)  # R: dict[str, Any]
functions: list[AgenticFunction] = [plan_trip, compare, no_runtime]


def outer(destination: str, runtime: Runtime) -> str:
    # Nested agentic calls keep their types under --strict.
    return plan_trip(destination) + compare(destination, "Rome", 2, runtime=runtime)
