"""A trip planner written as nested agentic functions.

``plan_trip`` is an agentic function: its body runs a tool loop. Among the
tools it offers is ``research_destination``, another agentic function whose
own loop inherits the planner's menu (the weather; not itself, through
``tools_deny``) — a sub-agent in three lines. The program looks up the free
weekends of the trip's month itself and puts them in the request, and closes
the plan with the facts (the weather and the free weekends) itself: offered
``free_weekends``, the default embedded 0.5B model gave June's weekends (June
is the example in its description) in the plans of 3 of 5 generated trips to
other months, and told the weekends, its plan still left them out on 2 of 5
(it repeated the researcher's answer). Each
model call has an output limit (``max_tokens``): the facts come from the
tools, and a plan of a few sentences needs no more, where the model,
unbounded, wrote on for minutes. Runs on the embedded model by default, or on
any provider::

    python examples/trip_planner.py Paris --month June
    python examples/trip_planner.py --model openai:gpt-4o-mini "Paris"
"""

from __future__ import annotations

import argparse
from typing import Literal

from openprogram import Runtime, agentic_function, function

_WEATHER = {
    "paris": ("sunny", 21),
    "london": ("light rain", 15),
    "tokyo": ("cloudy", 24),
    "rome": ("sunny", 27),
}


RESEARCH_TOKENS = 160
"""Output limit of each model call of the research (two sentences, or a call)."""
PLAN_TOKENS = 320
"""Output limit of each model call of the planner: a short plan. Unbounded, the default
embedded model wrote plans looping over made-up lists (up to 2.5 minutes a run)."""


@function(register_globally=False)
def get_weather(city: str, units: Literal["celsius", "fahrenheit"] = "celsius") -> str:
    """Current weather for a city.

    Args:
        city: City name, e.g. "Paris".
        units: Temperature unit.
    """
    sky, celsius = _WEATHER.get(city.strip().lower(), ("clear", 19))
    temp = celsius if units == "celsius" else round(celsius * 9 / 5 + 32)
    unit = "C" if units == "celsius" else "F"
    return f"{city}: {sky}, {temp} {unit}"


@function(register_globally=False)
def free_weekends(month: str) -> list[str]:
    """Weekends with nothing in the user's calendar.

    Args:
        month: Month name, e.g. "June".
    """
    return [f"{month} 6-7", f"{month} 20-21"]


@agentic_function(register_globally=False)
def research_destination(city: str, runtime: Runtime) -> str:
    """Research a destination: weather and what to do there.

    Args:
        city: The destination city.
    """
    return str(
        runtime.exec(
            f"Find the current weather in {city} with get_weather, then suggest two activities "
            "that suit that weather. Answer in two sentences.",
            tools_deny=["research_destination"],  # the planner's menu, minus itself
            max_tokens=RESEARCH_TOKENS,
        )
    )


@agentic_function(register_globally=False)
def plan_trip(destination: str, runtime: Runtime, month: str = "June") -> str:
    """Plan a weekend trip to a destination.

    Args:
        destination: Where the user wants to go.
        month: The month of the trip.
    """
    weekends = " and ".join(free_weekends(month))  # the program knows the month: it looks
    plan = runtime.exec(
        f"Plan a weekend trip to {destination} in {month}. The free weekends are "
        f"{weekends}. Use research_destination for the weather and activities, then "
        "write a short plan that names the weather and the free weekends.",
        tools=[research_destination, get_weather],
        max_tokens=PLAN_TOKENS,
    )
    # The facts, stated by the program: the model's plan may leave them out or garble them.
    return f"{plan}\n\nWeather: {get_weather(destination)}. Free weekends: {weekends}."


def main() -> None:
    """Run the planner from the command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("destination", nargs="?", default="Paris")
    parser.add_argument("--month", default="June", help="month of the trip")
    parser.add_argument(
        "--model", default=None, help='e.g. "openai:gpt-4o-mini" (default: OPENPROGRAM_MODEL)'
    )
    args = parser.parse_args()
    with Runtime(args.model):
        print(plan_trip(args.destination, month=args.month))


if __name__ == "__main__":
    main()
