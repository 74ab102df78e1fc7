"""The bundled demo: a trip planner written as nested agentic functions.

``plan_trip`` runs a tool loop whose menu holds ``research_destination``,
itself an agentic function: when the model picks it, its body opens a second,
nested loop with a menu of its own (``get_weather``). Everything the model
sees and does is shown live by the CLI's tree view.
"""

from __future__ import annotations

from typing import Literal

from openprogram.decorators import agentic_function, function
from openprogram.registry import Registry
from openprogram.runtime import Runtime

__all__ = ["DEMO_REGISTRY", "get_weather", "plan_trip", "research_destination"]

DEMO_REGISTRY = Registry()
"""The demo's own tools, kept out of the shared default registry."""

_SKY = {"paris": ("sunny", 21), "london": ("light rain", 15), "tokyo": ("cloudy", 24)}


@function(registry=DEMO_REGISTRY)
def get_weather(city: str, units: Literal["celsius", "fahrenheit"] = "celsius") -> str:
    """Get the current weather for a city.

    Args:
        city: City name, e.g. "Paris".
        units: Temperature unit.
    """
    sky, celsius = _SKY.get(city.strip().lower(), ("clear", 19))
    temp = celsius if units == "celsius" else round(celsius * 9 / 5 + 32)
    return f"{city}: {sky}, {temp} degrees {units}"


@agentic_function(registry=DEMO_REGISTRY)
def research_destination(city: str, runtime: Runtime) -> str:
    """Research the weather of a destination city.

    Args:
        city: The destination city, e.g. "Paris".
    """
    return str(
        runtime.exec(
            f"What is the weather in {city}?",
            tools=[get_weather],
            tool_choice="required",
        )
    )


@agentic_function(registry=DEMO_REGISTRY)
def plan_trip(destination: str, runtime: Runtime) -> str:
    """Plan a weekend trip.

    Args:
        destination: Where to go.
    """
    return str(
        runtime.exec(
            f"I want a weekend trip to {destination}. Research the destination, "
            "then suggest two activities that suit its weather. Keep it short.",
            tools=[research_destination],
            tool_choice="required",
        )
    )
