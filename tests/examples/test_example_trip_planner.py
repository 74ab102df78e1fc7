"""examples/trip_planner.py: a planner whose researcher sub-agent inherits the planner's menu."""

from __future__ import annotations

from _example_loader import load_example

from openprogram import Runtime
from openprogram.events import AgentInvoked, ToolCallCompleted
from openprogram.testing import ScriptedProvider, call

trip = load_example("trip_planner")

SCRIPT = [
    call("research_destination", city="Paris"),  # planner -> researcher (nested exec)
    call("get_weather", city="Paris"),  # researcher -> weather tool
    "Sunny and 21 C: walk the Seine, picnic in the Tuileries.",  # researcher's answer
    "Go on June 6-7: walk the Seine, then a picnic.",  # planner's plan
]


def run_planner() -> tuple[str, ScriptedProvider, Runtime]:
    provider = ScriptedProvider(SCRIPT)
    runtime = Runtime(provider)
    plan = trip.plan_trip("Paris", runtime=runtime)
    return plan, provider, runtime


def test_the_plan_is_the_planners_final_answer() -> None:
    plan, provider, _ = run_planner()
    assert plan == (
        "Go on June 6-7: walk the Seine, then a picnic.\n\n"
        "Weather: Paris: sunny, 21 C. Free weekends: June 6-7 and June 20-21."
    )
    assert len(provider.requests) == len(SCRIPT)


def test_the_researcher_inherits_the_planners_menu() -> None:
    _, provider, _ = run_planner()
    outer, inner = provider.requests[0], provider.requests[1]
    assert [t["name"] for t in outer.tools] == ["research_destination", "get_weather"]
    # research_destination calls runtime.exec without tools=: it gets the enclosing menu,
    # minus itself (tools_deny), so the small model cannot recurse into it
    assert [t["name"] for t in inner.tools] == ["get_weather"]
    assert "Paris" in str(inner.messages[0].content)


def test_tools_run_at_the_right_depth_with_their_results_fed_back() -> None:
    _, provider, runtime = run_planner()
    run = runtime.last_run
    assert run is not None
    depth = {e.run_id: e.depth for e in run.events_of(AgentInvoked)}
    done = {e.tool_name: depth[e.run_id] for e in run.events_of(ToolCallCompleted)}
    assert done == {"get_weather": 2, "research_destination": 1}
    weather_result = provider.requests[2].messages[-1]
    assert weather_result.content == "Paris: sunny, 21 C"
    research_result = provider.requests[3].messages[-1]
    assert research_result.content == SCRIPT[2]


def test_the_program_gives_the_planner_the_free_weekends_of_the_trips_month() -> None:
    provider = ScriptedProvider(["Go on March 6-7."])
    trip.plan_trip("Oslo", month="March", runtime=Runtime(provider))
    asked = str(provider.requests[0].messages[0].content)
    assert "The free weekends are March 6-7 and March 20-21." in asked


def test_weather_units_and_unknown_cities() -> None:
    assert trip.get_weather("Rome", units="fahrenheit") == "Rome: sunny, 81 F"
    assert trip.get_weather("Oslo") == "Oslo: clear, 19 C"


def test_each_model_call_has_an_output_limit() -> None:
    _, provider, _ = run_planner()
    plan, research = trip.PLAN_TOKENS, trip.RESEARCH_TOKENS
    assert [r.max_tokens for r in provider.requests] == [plan, research, research, plan]
