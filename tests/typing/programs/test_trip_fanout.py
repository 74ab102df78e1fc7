"""An async fan-out under one budget, on the shipped fakes, written the way a user would.

A travel desk plans weekends in several cities at once: ``asyncio.gather`` of
``plan_trip.arun(city)``, an agentic function whose exec looks up the
weather and a hotel (two tools in one reply) and answers with a pydantic
``Plan``. The whole fan-out runs in one ``runtime.tree(budget=...)``: its
execs share one budget (a model call beyond it is never made: the city that
would need it gets ``BudgetExceeded``), each call comes back with its own
record (``TreeResult``: the output and the ``RunResult`` of its exec), and
the tree's record adds them up. The model is a ``FunctionProvider`` playing
each city's loop from what the request holds.

Besides running here, this file must pass ``mypy --strict`` with no error:
the gathered results are ``TreeResult[Plan] | BaseException``, the outputs
``Plan``.
"""

from __future__ import annotations

import asyncio
import json

import pydantic

from openprogram import Budget, BudgetExceeded, Runtime, TreeResult, agentic_function, function
from openprogram.messages import ToolCall, ToolResultMessage, UserMessage
from openprogram.providers.base import ProviderRequest
from openprogram.registry import Registry
from openprogram.testing import FunctionProvider, call

WEATHER = {"Paris": "sunny", "Rome": "hot", "Oslo": "snow", "Lima": "mild", "Kyiv": "rain"}
HOTELS = {"Paris": "Hotel du Nord", "Rome": "Albergo Sole", "Oslo": "Fjord Inn"}

desk = Registry()


class Plan(pydantic.BaseModel):
    """A weekend in one city."""

    city: str
    weather: str
    hotel: str


@function(registry=desk)
def get_weather(city: str) -> str:
    """The weekend's weather in a city.

    Args:
        city: City name, e.g. "Paris".
    """
    return WEATHER.get(city, "unknown")


@function(registry=desk)
def find_hotel(city: str, max_price: int) -> str:
    """A hotel in a city within a nightly price.

    Args:
        city: City name.
        max_price: Highest price per night, in euros.
    """
    return HOTELS.get(city, "Youth hostel")


@agentic_function(registry=desk)
async def plan_trip(city: str, runtime: Runtime) -> Plan:
    """Plan a weekend in a city.

    Args:
        city: Where to go.
    """
    return await runtime.async_exec(
        f"Plan a weekend in {city}: check the weather and find a hotel under 150 EUR.",
        tools=[get_weather, find_hotel],
        response_format=Plan,
    )


def travel_model(request: ProviderRequest) -> str | list[ToolCall]:
    """One city's loop: both look-ups in one reply, then the plan from their results."""
    first = request.messages[0]
    assert isinstance(first, UserMessage)
    city = first.text.split()[4].rstrip(":")
    found = {m.tool_name: m.content for m in request.messages if isinstance(m, ToolResultMessage)}
    if not found and request.tool_choice != "none":
        return [call("get_weather", city=city), call("find_hotel", city=city, max_price=150)]
    plan = Plan(
        city=city,
        weather=str(found.get("get_weather", "not checked")),
        hotel=str(found.get("find_hotel", "not booked")),
    )
    return json.dumps(plan.model_dump())


async def plan_all(
    runtime: Runtime, cities: list[str], budget: Budget
) -> tuple[list[TreeResult[Plan] | BaseException], TreeResult[None]]:
    """Plan every city at once under one budget; each call's record, and the fan-out's."""
    async with runtime.tree(budget=budget) as tree:
        outcomes = await asyncio.gather(
            *(plan_trip.arun(city) for city in cities), return_exceptions=True
        )
    return outcomes, tree.result


def test_every_city_is_planned_when_the_budget_allows_the_whole_fan_out() -> None:
    model = FunctionProvider(travel_model)
    runtime = Runtime(model, registry=desk)
    cities = ["Paris", "Rome", "Oslo"]
    outcomes, fan_out = asyncio.run(plan_all(runtime, cities, Budget(model_calls=6)))
    plans: list[Plan] = []
    for outcome in outcomes:
        assert isinstance(outcome, TreeResult)
        plans.append(outcome.output)
        (run,) = outcome.runs  # each call ran one exec: its own record
        assert run.iterations == 2
        assert outcome.budget_usage.tool_calls == 2
    assert plans == [
        Plan(city="Paris", weather="sunny", hotel="Hotel du Nord"),
        Plan(city="Rome", weather="hot", hotel="Albergo Sole"),
        Plan(city="Oslo", weather="snow", hotel="Fjord Inn"),
    ]
    assert fan_out.budget_usage.model_calls == len(model.requests) == 6
    assert len(fan_out.runs) == 3


def test_the_fan_out_never_makes_a_model_call_beyond_its_budget() -> None:
    model = FunctionProvider(travel_model)
    runtime = Runtime(model, registry=desk)
    cities = list(WEATHER)  # five cities, two model calls each: ten without a budget
    outcomes, fan_out = asyncio.run(plan_all(runtime, cities, Budget(model_calls=6)))
    planned = [o.output for o in outcomes if isinstance(o, TreeResult)]
    refused = [o for o in outcomes if isinstance(o, BudgetExceeded)]
    assert len(planned) + len(refused) == len(cities)
    # Which cities the budget cuts short depends on when each starts; some are: refused
    # (no model call left to start with) or planned with their tools withdrawn.
    assert refused or any(plan.weather == "not checked" for plan in planned)
    assert all(error.limit == "model_calls" for error in refused)
    assert len(model.requests) == fan_out.budget_usage.model_calls == 6
    assert fan_out.usage.total_tokens == sum(run.usage.total_tokens for run in fan_out.runs)


def test_a_city_planned_alone_has_the_same_record_as_in_the_fan_out() -> None:
    runtime = Runtime(FunctionProvider(travel_model), registry=desk)
    trip = plan_trip.run("Lima", runtime=runtime)
    assert trip.output == Plan(city="Lima", weather="mild", hotel="Youth hostel")
    assert [type(event).__name__ for event in trip.events][:2] == ["AgentInvoked", "ToolsResolved"]
    assert trip.budget_usage.model_calls == 2
