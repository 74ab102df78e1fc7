"""``SchemaProvider``: every offered tool called once with valid arguments, nested menus too."""

from __future__ import annotations

from typing import Annotated, Literal

import pydantic
import pytest

from openprogram import Registry, Runtime, ToolResultMessage, agentic_function, function
from openprogram.testing import SchemaProvider

registry = Registry()
SEEN: list[tuple[str, object]] = []


class Stay(pydantic.BaseModel):
    nights: Annotated[int, pydantic.Field(ge=1, le=7)]
    board: Literal["none", "breakfast", "half"] = "none"


@function(registry=registry)
def get_weather(city: str, units: Literal["celsius", "fahrenheit"] = "celsius") -> str:
    """Current weather for a city."""
    SEEN.append(("get_weather", (city, units)))
    return f"{city}: sunny"


@function(registry=registry)
def find_hotels(city: str, stay: Stay, tags: set[Literal["quiet", "central"]] | None = None) -> str:
    """Hotels in a city for a stay."""
    assert isinstance(stay, Stay)
    assert 1 <= stay.nights <= 7
    SEEN.append(("find_hotels", (city, stay.nights, tags)))
    return "Hotel Azur"


@agentic_function(registry=registry)
def plan_trip(
    destination: str, days: Annotated[int, pydantic.Field(ge=1, le=3)], runtime: Runtime
) -> str:
    """Plan a trip."""
    SEEN.append(("plan_trip", (destination, days)))
    return runtime.exec(f"Plan {days} days in {destination}.", tools=[find_hotels])


@pytest.fixture(autouse=True)
def _clear() -> None:
    SEEN.clear()


def _errors(runtime: Runtime) -> list[str]:
    assert runtime.last_run is not None
    return [
        m.content
        for m in runtime.last_run.messages
        if isinstance(m, ToolResultMessage) and m.is_error
    ]


def test_every_tool_is_called_once_with_valid_arguments_and_nested_menus_too() -> None:
    model = SchemaProvider()
    runtime = Runtime(model)
    answer = runtime.exec("Go", tools=[get_weather, plan_trip])
    assert answer == "Called get_weather, plan_trip."
    assert [name for name, _ in SEEN].count("get_weather") == 1
    assert [name for name, _ in SEEN].count("plan_trip") == 1
    assert [name for name, _ in SEEN].count("find_hotels") == 1  # the nested exec's menu
    assert _errors(runtime) == []
    inner = [r for r in model.requests if [t["name"] for t in r.tools] == ["find_hotels"]]
    assert len(inner) == 2  # the call, then the nested answer
    assert [c.name for c in model.calls] == ["get_weather", "plan_trip", "find_hotels"]


def test_the_same_seed_gives_the_same_arguments_and_another_seed_may_differ() -> None:
    runs = []
    for seed in (1, 1, 2, 3):
        model = SchemaProvider(seed=seed)
        Runtime(model).exec("Go", tools=[get_weather, find_hotels])
        runs.append([(c.name, c.arguments) for c in model.calls])
    assert runs[0] == runs[1]
    assert runs[0] != runs[2] or runs[0] != runs[3]


def test_one_call_per_turn_when_parallel_calls_are_off_and_none_with_tool_choice_none() -> None:
    model = SchemaProvider(answer="ok")
    runtime = Runtime(model)
    assert runtime.exec("Go", tools=[get_weather, find_hotels], parallel_tool_calls=False) == "ok"
    assert [len(r.messages) for r in model.requests] == [1, 3, 5]
    model = SchemaProvider(answer="ok")
    assert Runtime(model).exec("Go", tools=[get_weather], tool_choice="none") == "ok"
    assert model.calls == []


def test_skip_and_forced_tool_choice() -> None:
    model = SchemaProvider(skip=["find_hotels"])
    Runtime(model).exec("Go", tools=[get_weather, find_hotels])
    assert [c.name for c in model.calls] == ["get_weather"]
    model = SchemaProvider()
    Runtime(model).exec(
        "Go",
        tools=[get_weather, find_hotels],
        tool_choice={"type": "function", "name": "find_hotels"},
    )
    # the forced turn calls only the forced tool; the runtime then lets the model choose
    assert [c.name for c in model.calls] == ["find_hotels", "get_weather"]
    assert model.requests[0].tool_choice == {"type": "function", "name": "find_hotels"}


def test_response_format_gets_a_valid_generated_value() -> None:
    for native in (True, False):
        model = SchemaProvider(native_structured_output=native, seed=5)
        stay = Runtime(model).exec("Book", tools=[], response_format=Stay)
        assert isinstance(stay, Stay)


def test_choices_pick_the_first_option_without_arguments() -> None:
    def escalate(reason: str) -> str:
        """Escalate with a reason."""
        return reason

    picked = Runtime(SchemaProvider()).exec(
        "Route it", tools=[], choices={"escalate": escalate, "close": "closed", "wait": "waiting"}
    )
    assert picked == "closed"
